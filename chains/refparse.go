package chains

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// parseString parses a string value. A string that is exactly one
// reference becomes a tRef; a string with references and other text an
// interpolation; a string with none a literal. `\{{` writes a literal "{{".
func parseString(s string) (*Template, error) {
	var parts []part
	var lit strings.Builder
	escaped := false
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], `\{{`) {
			lit.WriteString("{{")
			i += 3
			escaped = true
			continue
		}
		if !strings.HasPrefix(s[i:], "{{") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := strings.Index(s[i+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("unclosed {{ in %q", s)
		}
		ref, err := parseRef(s[i+2 : i+2+end])
		if err != nil {
			return nil, err
		}
		if lit.Len() > 0 {
			parts = append(parts, part{lit: lit.String()})
			lit.Reset()
		}
		parts = append(parts, part{ref: ref})
		i += 2 + end + 2
	}
	if lit.Len() > 0 {
		parts = append(parts, part{lit: lit.String()})
	}
	switch {
	case len(parts) == 0:
		return &Template{kind: tLiteral, lit: ""}, nil
	case len(parts) == 1 && parts[0].ref != nil && !escaped:
		return &Template{kind: tRef, ref: parts[0].ref}, nil
	case len(parts) == 1 && parts[0].ref == nil:
		return &Template{kind: tLiteral, lit: parts[0].lit}, nil
	}
	return &Template{kind: tInterp, parts: parts}, nil
}

// parseRef parses the text between {{ and }}:
//
//	ref   = ( "input" | "item" | "steps." id ".output" ) path
//	path  = { "." key | "[" digits "]" | "[" json-string "]" }
//
// Spaces around the reference are allowed.
func parseRef(text string) (*Ref, error) {
	s := strings.TrimSpace(text)
	bad := func(msg string) error { return fmt.Errorf("bad reference {{%s}}: %s", text, msg) }
	head, rest := splitHead(s)
	r := &Ref{}
	switch head {
	case "input":
		r.Root = RootInput
	case "item":
		r.Root = RootItem
	case "steps":
		if !strings.HasPrefix(rest, ".") {
			return nil, bad("want steps.ID.output")
		}
		id, after := splitHead(rest[1:])
		if !validID(id) {
			return nil, bad(fmt.Sprintf("bad step id %q", id))
		}
		if !strings.HasPrefix(after, ".output") {
			return nil, bad("want steps." + id + ".output")
		}
		r.Root = RootStep
		r.Step = id
		rest = after[len(".output"):]
		if rest != "" && rest[0] != '.' && rest[0] != '[' {
			return nil, bad("want steps." + id + ".output")
		}
	case "":
		return nil, bad("empty reference")
	default:
		return nil, bad(fmt.Sprintf("unknown root %q (want input, steps or item)", head))
	}
	path, rest, err := parsePath(rest)
	if err != nil {
		return nil, bad(err.Error())
	}
	r.Path = path
	if rest = strings.TrimSpace(rest); rest != "" {
		f, ok := strings.CutPrefix(rest, "|")
		if !ok {
			return nil, bad(fmt.Sprintf("unexpected %q", rest))
		}
		f = strings.TrimSpace(f)
		name, arg, _ := strings.Cut(f, " ")
		if name != "join" {
			return nil, bad(fmt.Sprintf("unknown filter %q (there is join)", name))
		}
		r.Join, r.Sep = true, "\n"
		if arg = strings.TrimSpace(arg); arg != "" {
			if err := json.Unmarshal([]byte(arg), &r.Sep); err != nil {
				return nil, bad("join: the separator is a JSON string, like \", \"")
			}
		}
	}
	return r, nil
}

// splitHead splits s at the first '.', '[', '|' or space.
func splitHead(s string) (head, rest string) {
	i := strings.IndexAny(s, ".[| \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// parsePath parses path elements up to a space or '|' and returns the rest.
func parsePath(s string) ([]PathElem, string, error) {
	var path []PathElem
	for s != "" {
		switch s[0] {
		case ' ', '\t', '|':
			return path, s, nil
		case '.':
			key, rest := splitHead(s[1:])
			if !isPlainKey(key) {
				return nil, "", fmt.Errorf("bad key %q", key)
			}
			path = append(path, PathElem{Key: key})
			s = rest
		case '[':
			if len(s) > 1 && s[1] == '"' {
				// A JSON string key: find its end honouring escapes.
				dec := json.NewDecoder(strings.NewReader(s[1:]))
				var key string
				if err := dec.Decode(&key); err != nil {
					return nil, "", fmt.Errorf("bad quoted key: %v", err)
				}
				n := 1 + int(dec.InputOffset())
				if n >= len(s) || s[n] != ']' {
					return nil, "", fmt.Errorf("missing ] after quoted key")
				}
				path = append(path, PathElem{Key: key})
				s = s[n+1:]
				continue
			}
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, "", fmt.Errorf("missing ]")
			}
			digits := s[1:end]
			if digits == "*" {
				path = append(path, PathElem{All: true})
				s = s[end+1:]
				continue
			}
			n, err := strconv.Atoi(digits)
			if err != nil || n < 0 || digits == "" || (len(digits) > 1 && digits[0] == '0') || strings.ContainsAny(digits, "+-") {
				return nil, "", fmt.Errorf("bad index [%s]", digits)
			}
			path = append(path, PathElem{Index: n, IsIndex: true})
			s = s[end+1:]
		default:
			return nil, "", fmt.Errorf("unexpected %q", s)
		}
	}
	return path, "", nil
}

// isPlainKey: a key that may follow a dot.
func isPlainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '$':
		default:
			return false
		}
	}
	return true
}

// validID: step ids are letters, digits, '_' and '-', starting with a letter
// or '_'.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9') || c == '-':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
