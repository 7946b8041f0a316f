package bfcl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The JavaScript category works like the Java one: arguments are JavaScript
// source text, converted back by a port of BFCL's js_type_converter.py.

// jsTypes is BFCL's JS_TYPE_CONVERSION.
var jsTypes = map[string]pyType{
	"String": tStr, "integer": tInt, "float": tFloat, "Bigint": tInt,
	"Boolean": tBool, "dict": tDict, "array": tList, "any": tStr,
}

var (
	jsIntRE     = regexp.MustCompile(`^-?\d+$`)
	jsFloatRE   = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	jsBigintRE  = regexp.MustCompile(`^-?\d+n$`)
	jsArray2DRE = regexp.MustCompile(`^(?:\[\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\]|\bnew\s+Array\(\s*\[.*?\]\s*(,\s*\[.*?\]\s*)*\))`)
	jsInnerRE   = regexp.MustCompile(`\[(.*?)\]`)
	jsArrayRE   = regexp.MustCompile(`^(?:\[(.*?)\]|\bnew\s+Array\((.*?)\))`)
	jsDictRE    = regexp.MustCompile(`^\{(.*?)\}`)
)

// jsConvert is js_type_converter(value, expectedType, nestedType).
func jsConvert(value, expectedType, nestedType string) (any, error) {
	if _, ok := jsTypes[expectedType]; !ok {
		return nil, fmt.Errorf("unsupported JavaScript type %q", expectedType)
	}
	switch expectedType {
	case "String":
		if !(strings.HasPrefix(value, `"`) && strings.HasSuffix(value, `"`)) &&
			!(strings.HasPrefix(value, "'") && strings.HasSuffix(value, "'")) {
			return value, nil
		}
		return pySlice1(value), nil
	case "integer":
		if !jsIntRE.MatchString(value) {
			return value, nil
		}
		return parsePyInt(value), nil
	case "float":
		if !jsFloatRE.MatchString(value) {
			return value, nil
		}
		f, _ := strconv.ParseFloat(value, 64)
		return pyFloat(f), nil
	case "Bigint":
		if !jsBigintRE.MatchString(value) {
			return value, nil
		}
		return parsePyInt(value[:len(value)-1]), nil
	case "Boolean":
		if value != "true" && value != "false" {
			return value, nil
		}
		return value == "true", nil
	case "dict":
		return jsParseCollection(value, "dict", nestedType), nil
	case "array":
		return jsParseCollection(value, "array", nestedType), nil
	}
	return value, nil // any
}

// jsParseCollection is parse_js_collection. Conversion errors inside an
// array fall back to the source text, as BFCL's try/except does.
func jsParseCollection(code, kind, nestedType string) any {
	code = strings.TrimSpace(code)
	if kind == "array" {
		if m := jsArray2DRE.FindString(code); m != "" {
			var out []any
			for idx, inner := range jsInnerRE.FindAllStringSubmatch(m, -1) {
				s := strings.TrimSpace(inner[1])
				if idx == 0 && strings.HasPrefix(s, "[") {
					s = s[1:]
				}
				var row []any
				for _, e := range strings.Split(s, ",") {
					row = append(row, jsParseValue(strings.TrimSpace(e)))
				}
				out = append(out, row)
			}
			return out
		}
		m := jsArrayRE.FindStringSubmatchIndex(code)
		if m == nil {
			return code
		}
		var elems []string
		for _, g := range []int{1, 2} {
			if m[2*g] >= 0 {
				if s := strings.TrimSpace(code[m[2*g]:m[2*g+1]]); s != "" {
					elems = strings.Split(s, ",")
				}
				break
			}
		}
		out := []any{}
		for _, e := range elems {
			e = strings.TrimSpace(e)
			if nestedType != "" {
				v, err := jsConvert(e, nestedType, "")
				if err != nil {
					return code
				}
				out = append(out, v)
			} else {
				out = append(out, jsParseValue(e))
			}
		}
		return out
	}
	// dict
	if code == "{}" {
		return map[string]any{}
	}
	m := jsDictRE.FindStringSubmatch(code)
	if m == nil {
		return code
	}
	out := map[string]any{}
	for _, kv := range jsFindPairs(m[1]) {
		key := strings.Trim(strings.TrimSpace(kv[0]), `'"`)
		val := strings.TrimSpace(kv[1])
		switch {
		case strings.HasPrefix(val, "[") && strings.HasSuffix(val, "]"):
			out[key] = jsParseCollection(val, "array", "")
		case strings.HasPrefix(val, "{") && strings.HasSuffix(val, "}"):
			out[key] = jsParseCollection(val, "dict", "")
		default:
			out[key] = jsParseValue(strings.Trim(val, `'"`))
		}
	}
	return out
}

// jsFindPairs is re.findall(r"([^:]+):\s*(.*?)(?:,\s*(?=[^,]+:)|$)", content).
// Go's regexp has no lookahead, so the match is done by hand, following the
// order in which Python's backtracking engine tries the alternatives.
func jsFindPairs(content string) [][2]string {
	var out [][2]string
	pos := 0
	for pos < len(content) {
		found := false
		for s := pos; s < len(content); s++ {
			// ([^:]+): the run of non-colons from s must end at a colon.
			colon := strings.IndexByte(content[s:], ':')
			if colon <= 0 {
				if colon < 0 {
					return out
				}
				continue // empty key at s; try the next start
			}
			colon += s
			v := colon + 1
			for v < len(content) && isPySpace(content[v]) {
				v++
			}
			// (.*?) then (?:,\s*(?=[^,]+:)|$); '.' stops at a newline.
			for t := v; ; t++ {
				if t == len(content) || (t == len(content)-1 && content[t] == '\n') {
					out = append(out, [2]string{content[s:colon], content[v:t]})
					pos, found = t, true
					break
				}
				if content[t] == ',' {
					p := t + 1
					for p < len(content) && isPySpace(content[p]) {
						p++
					}
					if lookaheadKey(content[p:]) {
						out = append(out, [2]string{content[s:colon], content[v:t]})
						pos, found = p, true
						break
					}
				}
				if content[t] == '\n' {
					break
				}
			}
			if found {
				break
			}
		}
		if !found || pos >= len(content) {
			break
		}
	}
	return out
}

// lookaheadKey is (?=[^,]+:) at the start of s.
func lookaheadKey(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',':
			return false
		case ':':
			if i > 0 {
				return true
			}
		}
	}
	return false
}

func isPySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// jsParseValue is parse_js_value.
func jsParseValue(s string) any {
	s = strings.TrimSpace(s)
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case (strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`)) ||
		(strings.HasPrefix(s, "'") && strings.HasSuffix(s, "'")):
		return pySlice1(s)
	}
	return pyParseNumberOr(s)
}
