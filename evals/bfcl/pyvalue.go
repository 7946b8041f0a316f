package bfcl

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/evals/report"
)

// BFCL's checker is Python: it compares values with ==, asks type(v), and
// relies on json.loads telling 5 (int) from 5.0 (float). This file gives the
// Go port the same value model.
//
// Every value the checker looks at is first normalised by pyNorm into one of:
//
//	nil             Python None
//	bool            bool
//	pyInt           int   (json.Number without '.', 'e', 'E'; Go integer types)
//	pyFloat         float (json.Number with a fraction or exponent; float32)
//	pyNum           a float64 from Go's encoding/json: whole-valued floats
//	                there may have been written "5" or "5.0", so pyNum counts
//	                as both int and float in type checks. Decode model output
//	                with json.Decoder.UseNumber (see DecodeCall) to avoid it.
//	string, []any, map[string]any

type (
	pyInt   int64
	pyFloat float64
	pyNum   float64
)

// pyType is a Python type as the checker's type maps name them.
type pyType int

const (
	tUnknown pyType = iota
	tNone
	tBool
	tInt
	tFloat
	tStr
	tList
	tDict
	tSet // Java Set: never produced by JSON, so a Set parameter never type-checks
)

func (t pyType) String() string {
	switch t {
	case tNone:
		return "NoneType"
	case tBool:
		return "bool"
	case tInt:
		return "int"
	case tFloat:
		return "float"
	case tStr:
		return "str"
	case tList:
		return "list"
	case tDict:
		return "dict"
	case tSet:
		return "set"
	}
	return "unknown"
}

// pyNorm converts a decoded JSON value (or a Go literal in tests) into the
// checker's value model.
func pyNorm(v any) any {
	switch x := v.(type) {
	case nil, bool, string, pyInt, pyFloat, pyNum:
		return x
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return pyInt(n)
			}
		}
		f, _ := strconv.ParseFloat(s, 64)
		return pyFloat(f)
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<53 {
			return pyNum(x)
		}
		return pyFloat(x)
	case float32:
		return pyFloat(x)
	case int:
		return pyInt(x)
	case int8:
		return pyInt(x)
	case int16:
		return pyInt(x)
	case int32:
		return pyInt(x)
	case int64:
		return pyInt(x)
	case uint:
		return pyInt(x)
	case uint8:
		return pyInt(x)
	case uint16:
		return pyInt(x)
	case uint32:
		return pyInt(x)
	case uint64:
		return pyInt(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = pyNorm(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = pyNorm(e)
		}
		return out
	default:
		// Anything else (structs, other slices): go through JSON once.
		b, err := json.Marshal(x)
		if err != nil {
			return x
		}
		var y any
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.UseNumber()
		if dec.Decode(&y) != nil {
			return x
		}
		return pyNorm(y)
	}
}

// typeIs reports type(v) == t, with pyNum matching both int and float.
func typeIs(v any, t pyType) bool {
	switch v.(type) {
	case nil:
		return t == tNone
	case bool:
		return t == tBool
	case pyInt:
		return t == tInt
	case pyFloat:
		return t == tFloat
	case pyNum:
		return t == tInt || t == tFloat
	case string:
		return t == tStr
	case []any:
		return t == tList
	case map[string]any:
		return t == tDict
	}
	return false
}

// typeOf returns type(v); pyNum reports int (only used for messages and for
// the possible answers, which never hold pyNum).
func typeOf(v any) pyType {
	switch v.(type) {
	case nil:
		return tNone
	case bool:
		return tBool
	case pyInt, pyNum:
		return tInt
	case pyFloat:
		return tFloat
	case string:
		return tStr
	case []any:
		return tList
	case map[string]any:
		return tDict
	}
	return tUnknown
}

// numeric returns v as a float64 when Python would compare it as a number
// (bool is an int subclass: True == 1).
func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case pyInt:
		return float64(x), true
	case pyFloat:
		return float64(x), true
	case pyNum:
		return float64(x), true
	}
	return 0, false
}

// pyEq is Python's == on the value model.
func pyEq(a, b any) bool {
	return report.TreeEqual(a, b, func(a, b any) (bool, bool) {
		x, ok := numeric(a)
		if !ok {
			return false, false
		}
		y, ok := numeric(b)
		return true, ok && x == y
	})
}

// pyIn is Python's `v in list`.
func pyIn(v any, list []any) bool {
	for _, e := range list {
		if pyEq(v, e) {
			return true
		}
	}
	return false
}

// pyLen returns len(v) for the values the checker calls len on (lists and
// strings; a string's length in characters), and false for the rest, where
// Python would raise.
func pyLen(v any) (int, bool) {
	switch x := v.(type) {
	case []any:
		return len(x), true
	case string:
		return len([]rune(x)), true
	case map[string]any:
		return len(x), true
	}
	return 0, false
}

// pyIter returns the items of a list, or the one-character strings of a
// string, as Python's `for i in range(len(x)): x[i]` sees them.
func pyIter(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case string:
		rs := []rune(x)
		out := make([]any, len(rs))
		for i, r := range rs {
			out[i] = string(r)
		}
		return out, true
	}
	return nil, false
}

var standardizeRE = regexp.MustCompile(`[ ,./\-_*^]`)

// Standardize is BFCL's standardize_string: remove spaces and the characters
// , . / - _ * ^, lowercase, and turn ' into ".
func Standardize(s string) string {
	return strings.ReplaceAll(strings.ToLower(standardizeRE.ReplaceAllString(s, "")), "'", `"`)
}

// sortedKeys returns a map's keys in order, so that reasons are deterministic.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pyRepr renders a value for a reason string.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case pyInt:
		return strconv.FormatInt(int64(x), 10)
	case pyFloat:
		s := strconv.FormatFloat(float64(x), 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0"
		}
		return s
	case pyNum:
		return strconv.FormatFloat(float64(x), 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := sortedKeys(x)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + pyRepr(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
