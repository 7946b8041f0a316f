package builtin

import (
	"fmt"
	"path"
)

// maxGlobAlternatives bounds what one pattern's {a,b} groups may expand
// to: a pattern is a caller's input, and each alternative is matched
// against every file visited.
const maxGlobAlternatives = 64

// glob is a list-files pattern: path.Match syntax plus {a,b} alternatives
// (as shells and most glob libraries read them: *.{csv,xlsx} is *.csv or
// *.xlsx; groups may nest), which a request for a kind of file needs
// ("the spreadsheets": several file types at once).
type glob []string

// compileGlob expands pattern's alternatives and checks each one.
func compileGlob(pattern string) (glob, error) {
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	for _, a := range alts {
		if _, err := path.Match(a, ""); err != nil {
			return nil, err
		}
	}
	return alts, nil
}

// Match reports whether name matches any alternative.
func (g glob) Match(name string) bool {
	for _, a := range g {
		if ok, _ := path.Match(a, name); ok {
			return true
		}
	}
	return false
}

// expandBraces rewrites the first {…} group (outside a [...] class, not
// escaped) into one pattern per alternative, recursively.
func expandBraces(p string) ([]string, error) {
	open, depth, inClass := -1, 0, false
	var commas []int
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
		case c == '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case c == ',' && depth == 1:
			commas = append(commas, i)
		case c == '}' && depth > 0:
			depth--
			if depth > 0 {
				continue
			}
			if len(commas) == 0 {
				// "{a}" names one thing: keep it as written, without the braces.
				return expandBraces(p[:open] + p[open+1:i] + p[i+1:])
			}
			var out []string
			start := open + 1
			for _, c := range append(commas, i) {
				sub, err := expandBraces(p[:open] + p[start:c] + p[i+1:])
				if err != nil {
					return nil, err
				}
				out = append(out, sub...)
				if len(out) > maxGlobAlternatives {
					return nil, fmt.Errorf("more than %d alternatives", maxGlobAlternatives)
				}
				start = c + 1
			}
			return out, nil
		}
	}
	if depth > 0 {
		return nil, fmt.Errorf("unclosed { at %d", open)
	}
	return []string{p}, nil
}
