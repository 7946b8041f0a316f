package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parser turns one configuration file into a Config and collects every
// Problem with its line: here the YAML errors and the line of a key,
// build.go the checks and defaults of each section.
type parser struct {
	file     string // "" when none
	name     string // for messages
	root     yaml.Node
	problems []Problem
}

func (p *parser) add(line int, format string, args ...any) {
	p.problems = append(p.problems, Problem{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)})
}

var lineRE = regexp.MustCompile(`^line (\d+): (.*)$`)
var cannotRE = regexp.MustCompile(`^cannot unmarshal !!(\w+) (.*) into (.*)$`)

func yamlTagName(tag string) string {
	switch tag {
	case "str":
		return "a string"
	case "int", "float":
		return "a number"
	case "bool":
		return "true/false"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "null":
		return "empty"
	}
	return tag
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "bool":
		return "true or false"
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "struct"), strings.HasPrefix(t, "config."):
		return "a mapping"
	}
	return t
}

// parserProblem tells yaml.v3's parser errors (parserc.go) from its
// scanner errors by their fixed messages.
func parserProblem(msg string) bool {
	for _, p := range []string{"did not find expected ',' or", "did not find expected '-' indicator", "did not find expected <",
		"did not find expected key", "did not find expected node content", "found duplicate %", "found incompatible YAML document",
		"found undefined tag handle"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

var unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type `)

// yamlProblems turns yaml.v3's errors ("yaml: unmarshal errors:\n  line 3:
// field foo not found in type ...") into file:line problems.
func (p *parser) yamlProblems(err error) []Problem {
	var out []Problem
	var te *yaml.TypeError
	msgs := []string{strings.TrimPrefix(err.Error(), "yaml: ")}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	for _, m := range msgs {
		m = strings.TrimSpace(m)
		line := 0
		if sm := lineRE.FindStringSubmatch(m); sm != nil {
			line, _ = strconv.Atoi(sm[1])
			m = sm[2]
			if te == nil && parserProblem(m) {
				// yaml.v3 counts a parser error's line from 0 (a
				// scanner error's from 1): the construct that failed
				// starts on the next line.
				line++
			}
		}
		if sm := unknownFieldRE.FindStringSubmatch(m); sm != nil {
			m = fmt.Sprintf("unknown key %q: check its spelling and indentation (keys: see `airs help config`)", sm[1])
		} else if sm := cannotRE.FindStringSubmatch(m); sm != nil {
			m = fmt.Sprintf("wrong type: %s is %s, want %s; see `airs help config` for the expected form", sm[2], yamlTagName(sm[1]), goTypeName(sm[3]))
		} else if strings.HasPrefix(m, "cannot unmarshal") {
			m = strings.Replace(m, "cannot unmarshal", "wrong type:", 1) + "; see `airs help config` for the expected form"
		}
		out = append(out, Problem{File: p.name, Line: line, Msg: m})
	}
	return out
}

// line returns the line of the node at path (mapping keys, or sequence
// indexes as decimal strings); for the last key of a mapping, the key's
// line. 0 when absent.
func (p *parser) line(path ...string) int {
	n := &p.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, k := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		default:
			return line
		}
	}
	return line
}

// has reports whether the file sets the key at path.
func (p *parser) has(path ...string) bool {
	n := &p.root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range path {
		if n.Kind != yaml.MappingNode {
			return false
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return false
		}
		n = next
	}
	return true
}
