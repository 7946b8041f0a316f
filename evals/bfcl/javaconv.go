package bfcl

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// In the Java category a model writes every argument as Java source text
// ("42L", "new ArrayList<>(Arrays.asList(1, 2))", "true"); BFCL converts it
// back with bfcl_eval/eval_checker/ast_eval/type_convertor/java_type_converter.py
// before the usual checks. A string that does not parse as the declared type
// stays a string, so it can still match a ground truth that names a variable.
// This is a port of that converter, regular expressions included.

// javaTypes is BFCL's JAVA_TYPE_CONVERSION.
var javaTypes = map[string]pyType{
	"byte": tInt, "short": tInt, "integer": tInt, "long": tInt,
	"float": tFloat, "double": tFloat,
	"boolean": tBool,
	"char":    tStr, "String": tStr, "any": tStr,
	"Array": tList, "ArrayList": tList, "Queue": tList, "Stack": tList,
	"Set":     tSet,
	"HashMap": tDict, "Hashtable": tDict,
}

var (
	javaIntRE        = regexp.MustCompile(`^-?\d+$`)
	javaFloatRE      = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?[fF]$`)
	javaDoubleRE     = regexp.MustCompile(`^-?\d+(\.\d+)?([eE][+-]?\d+)?$`)
	javaLongRE       = regexp.MustCompile(`^-?\d+[lL]$`)
	javaAsListRE     = regexp.MustCompile(`new\s+ArrayList<\w*>\(Arrays\.asList\((.+?)\)\)`)
	javaAddBlockRE   = regexp.MustCompile(`(?s)new\s+ArrayList<\w*>\(\)\s*\{\{\s*(.+?)\s*\}\}`)
	javaAddRE        = regexp.MustCompile(`add\((.+?)\)`)
	javaEmptyListRE  = regexp.MustCompile(`new\s+ArrayList<\w*>\(\)`)
	javaArrayRE      = regexp.MustCompile(`new\s+\w+\[\]\s*\{(.*?)\}`)
	javaHashMapRE    = regexp.MustCompile(`(?s)new\s+HashMap<.*?>\s*\(\)\s*\{\s*\{?\s*(.*?)\s*\}?\s*\}`)
	javaPutRE        = regexp.MustCompile(`put\("(.*?)",\s*(.*?)\)`)
	javaEmptyHashRE  = regexp.MustCompile(`new\s+HashMap<.*?>\s*\(\)`)
	trailingFloatSfx = regexp.MustCompile(`[fF]$`)
)

// javaConvert is java_type_converter(value, expectedType, nestedType).
func javaConvert(value, expectedType, nestedType string) (any, error) {
	if _, ok := javaTypes[expectedType]; !ok {
		return nil, fmt.Errorf("unsupported Java type %q", expectedType)
	}
	switch expectedType {
	case "byte", "short", "integer":
		if !javaIntRE.MatchString(value) {
			return value, nil
		}
		return parsePyInt(value), nil
	case "float":
		if !javaFloatRE.MatchString(value) {
			return value, nil
		}
		f, _ := strconv.ParseFloat(trailingFloatSfx.ReplaceAllString(value, ""), 64)
		return pyFloat(f), nil
	case "double":
		if !javaDoubleRE.MatchString(value) {
			return value, nil
		}
		f, _ := strconv.ParseFloat(value, 64)
		return pyFloat(f), nil
	case "long":
		if !javaLongRE.MatchString(value) {
			return value, nil
		}
		return parsePyInt(value[:len(value)-1]), nil
	case "boolean":
		if value != "true" && value != "false" {
			return value, nil
		}
		return value == "true", nil
	case "char":
		// BFCL's char pattern (^\'.$\') can never match, so a char stays
		// the string the model wrote.
		return value, nil
	case "Array":
		return javaParseArray(value, nestedType)
	case "ArrayList":
		return javaParseArrayList(value, nestedType)
	case "HashMap":
		return javaParseHashMap(value), nil
	case "String", "any":
		return value, nil
	}
	// Set, Hashtable, Queue, Stack: BFCL raises NotImplementedError.
	return nil, fmt.Errorf("conversion of Java type %s is not implemented", expectedType)
}

// parsePyInt parses a string that matched ^-?\d+$; past int64 it keeps the
// value as a float, which compares equal to the same Python int.
func parsePyInt(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return pyInt(n)
	}
	f, _ := strconv.ParseFloat(s, 64)
	return pyFloat(f)
}

// pySlice1 is Python's s[1:-1].
func pySlice1(s string) string {
	r := []rune(s)
	if len(r) < 2 {
		return ""
	}
	return string(r[1 : len(r)-1])
}

func javaElement(s, nestedType string) (any, error) {
	switch {
	case nestedType == "char" || nestedType == "String":
		return pySlice1(s), nil // remove the quotes
	case nestedType != "":
		return javaConvert(s, nestedType, "")
	default:
		return javaParseValue(s), nil
	}
}

func javaParseArrayList(in, nestedType string) (any, error) {
	if m := javaAsListRE.FindStringSubmatch(in); m != nil {
		var out []any
		for _, e := range strings.Split(m[1], ",") {
			v, err := javaElement(strings.TrimSpace(e), nestedType)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if m := javaAddBlockRE.FindStringSubmatch(in); m != nil {
		out := []any{}
		for _, add := range javaAddRE.FindAllStringSubmatch(m[1], -1) {
			v, err := javaElement(strings.TrimSpace(add[1]), nestedType)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if javaEmptyListRE.MatchString(in) {
		return []any{}, nil
	}
	return in, nil
}

func javaParseArray(in, nestedType string) (any, error) {
	m := javaArrayRE.FindStringSubmatch(in)
	if m == nil {
		return in, nil
	}
	out := []any{}
	for _, e := range strings.Split(m[1], ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if nestedType != "" {
			v, err := javaConvert(e, nestedType, "")
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		} else {
			out = append(out, javaParseValue(e))
		}
	}
	return out, nil
}

func javaParseHashMap(in string) any {
	if m := javaHashMapRE.FindStringSubmatch(in); m != nil {
		out := map[string]any{}
		if strings.TrimSpace(m[1]) != "" {
			for _, put := range javaPutRE.FindAllStringSubmatch(m[1], -1) {
				out[put[1]] = javaParseValue(strings.TrimSpace(put[2]))
			}
		}
		return out
	}
	if javaEmptyHashRE.MatchString(in) {
		return map[string]any{}
	}
	return in
}

// javaParseValue is parse_java_value: a literal whose type is not declared.
func javaParseValue(s string) any {
	switch {
	case s == "true":
		return true
	case s == "false":
		return false
	case strings.HasPrefix(s, `"`) && strings.HasSuffix(s, `"`):
		return pySlice1(s)
	case javaLongRE.MatchString(s):
		return parsePyInt(s[:len(s)-1])
	case javaFloatRE.MatchString(s):
		f, _ := strconv.ParseFloat(trailingFloatSfx.ReplaceAllString(s, ""), 64)
		return pyFloat(f)
	}
	return pyParseNumberOr(s)
}

// pyParseNumberOr is `try: int(s) except: try: float(s) except: s`.
func pyParseNumberOr(s string) any {
	t := strings.TrimSpace(s)
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return pyInt(n)
	}
	if t != "" && !strings.HasPrefix(strings.TrimLeft(t, "+-"), "0x") && !strings.HasPrefix(strings.TrimLeft(t, "+-"), "0X") && !strings.Contains(t, "_") {
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return pyFloat(f)
		}
	}
	return s
}
