package bfcl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Call is one function call a model made.
type Call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"arguments"`
}

// DecodeCall parses {"name": ..., "arguments": {...}} (also accepting
// "function" for the name, as AIRS's grammar writes it) keeping numbers as
// json.Number, so that the checker can tell 5 from 5.0 as BFCL does.
func DecodeCall(data []byte) (Call, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw struct {
		Name      string         `json:"name"`
		Function  string         `json:"function"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := dec.Decode(&raw); err != nil {
		return Call{}, err
	}
	c := Call{Name: raw.Name, Args: raw.Arguments}
	if c.Name == "" {
		c.Name = raw.Function
	}
	if c.Name == "" {
		return Call{}, fmt.Errorf("bfcl: call has no name")
	}
	if c.Args == nil {
		c.Args = map[string]any{}
	}
	return c, nil
}

// Result is the checker's verdict. ErrorType uses BFCL's error_type strings
// (e.g. "simple_function_checker:missing_required") so failures can be
// tallied the way BFCL's score files do.
type Result struct {
	OK        bool
	Reason    string
	ErrorType string
}

func pass() Result { return Result{OK: true} }

func fail(errorType, format string, args ...any) Result {
	return Result{ErrorType: errorType, Reason: fmt.Sprintf(format, args...)}
}

// Language is the language a category's functions are written in; it decides
// the type rules.
type Language int

const (
	Python Language = iota
	Java
	JavaScript
)

// LanguageOf returns the language of a category ("simple_java" → Java).
func LanguageOf(category string) Language {
	switch {
	case strings.Contains(category, "javascript"):
		return JavaScript
	case strings.Contains(category, "java"):
		return Java
	}
	return Python
}

// IsRelevanceCategory reports whether a category is scored on whether a call
// was made at all (irrelevance, live_irrelevance, live_relevance).
func IsRelevanceCategory(category string) bool {
	return strings.Contains(category, "relevance")
}

// Check scores the calls a model made for question q under the rules of
// category (normally q.Category):
//
//   - irrelevance, live_irrelevance: right when no call is made;
//     live_relevance: right when some call is made (BFCL's relevance runner).
//   - categories containing "parallel": each expected call must be matched by
//     a distinct model call, in any order, and the counts must be equal.
//   - categories containing "multiple": exactly one call, checked against the
//     one expected call.
//   - the rest (simple_*, live_simple): exactly one call, checked against the
//     first function's documentation.
//
// One call is checked by simpleFunctionChecker; see its comment for the rules.
func Check(q Question, calls []Call, category string) Result {
	if strings.Contains(category, "irrelevance") {
		if len(calls) == 0 {
			return pass()
		}
		return fail("irrelevance_error:decoder_success", "Valid syntax. Successfully decode AST when it should not: %d call(s), first %q.", len(calls), calls[0].Name)
	}
	if strings.Contains(category, "relevance") {
		if len(calls) > 0 {
			return pass()
		}
		return fail("relevance_error:decoder_failed", "Valid syntax. No function call decoded when one was expected.")
	}
	lang := LanguageOf(category)
	switch {
	case strings.Contains(category, "parallel"):
		return parallelNoOrder(q, calls, lang)
	case strings.Contains(category, "multiple"):
		if len(calls) != len(q.GroundTruth) {
			return fail("multiple_function_checker:wrong_count", "Wrong number of functions: got %d, want %d.", len(calls), len(q.GroundTruth))
		}
		if len(q.GroundTruth) == 0 {
			return fail("multiple_function_checker:no_ground_truth", "Question has no ground truth.")
		}
		exp := q.GroundTruth[0]
		fd, ok := q.Function(exp.Name)
		if !ok {
			return fail("multiple_function_checker:no_description", "No function description for expected function %q.", exp.Name)
		}
		return simpleFunctionChecker(fd, calls[0], exp, lang)
	default:
		if len(calls) != 1 {
			return fail("simple_function_checker:wrong_count", "Wrong number of functions: got %d, want 1.", len(calls))
		}
		if len(q.Functions) == 0 || len(q.GroundTruth) == 0 {
			return fail("simple_function_checker:no_ground_truth", "Question has no function or no ground truth.")
		}
		return simpleFunctionChecker(q.Functions[0], calls[0], q.GroundTruth[0], lang)
	}
}

// parallelNoOrder is parallel_function_checker_no_order: expected calls are
// taken in order, and each is matched greedily to the first model call not
// yet matched that passes the simple checker.
func parallelNoOrder(q Question, calls []Call, lang Language) Result {
	if len(calls) != len(q.GroundTruth) {
		return fail("parallel_function_checker_no_order:wrong_count", "Wrong number of functions: got %d, want %d.", len(calls), len(q.GroundTruth))
	}
	matched := make([]bool, len(calls))
	for i, exp := range q.GroundTruth {
		fd, ok := q.Function(exp.Name)
		if !ok {
			return fail("parallel_function_checker_no_order:no_description", "No function description for expected function %q.", exp.Name)
		}
		var last Result
		found := false
		for j, c := range calls {
			if matched[j] {
				continue
			}
			last = simpleFunctionChecker(fd, c, exp, lang)
			if last.OK {
				matched[j], found = true, true
				break
			}
		}
		if !found {
			return fail("parallel_function_checker_no_order:cannot_find_match",
				"Could not find a matching function among the unmatched model calls for index %d of possible answers (%s); last error: %s", i, exp.Name, last.Reason)
		}
	}
	return pass()
}

// simpleFunctionChecker is simple_function_checker: one model call against
// one expected call.
//
//  1. The name must be the function's.
//  2. Every name in the function's "required" must be present.
//  3. Every argument must be a documented parameter that also appears in the
//     ground truth ("unexpected parameter" otherwise).
//  4. Java/JavaScript: the argument must be a string, converted from source
//     text to a value by the declared type. Python: an int is accepted for a
//     float parameter.
//  5. Type check (typeChecker): the value's type must be the declared one,
//     or — when the ground truth names a variable — the ground truth's type.
//  6. Value check, unless the value is a variable: dict → dictChecker,
//     list of dicts → listDictChecker, string → stringChecker (normalised),
//     list → listChecker; anything else must be among the accepted values.
//  7. A ground-truth parameter the model omitted must accept "".
func simpleFunctionChecker(fd Function, c Call, exp ExpectedCall, lang Language) Result {
	if c.Name != fd.Name {
		return fail("simple_function_checker:wrong_func_name", "Function name %q not found in model output (got %q).", fd.Name, c.Name)
	}
	props, _ := fd.Parameters["properties"].(map[string]any)
	required, _ := fd.Parameters["required"].([]any)
	for _, r := range required {
		name, _ := r.(string)
		if _, ok := c.Args[name]; !ok {
			return fail("simple_function_checker:missing_required", "Missing required parameter: %q.", name)
		}
	}
	for _, param := range sortedKeys(c.Args) {
		details, inDoc := props[param].(map[string]any)
		possible, inAnswer := exp.Params[param]
		if !inDoc || !inAnswer {
			return fail("simple_function_checker:unexpected_param", "Unexpected parameter: %q.", param)
		}
		possible = pyNorm(possible).([]any)
		typeDesc, _ := details["type"].(string)
		value := pyNorm(c.Args[param])
		var expT, nestedT pyType
		switch lang {
		case Java, JavaScript:
			types, convert, errType := javaTypes, javaConvert, "type_error:java"
			if lang == JavaScript {
				types, convert, errType = jsTypes, jsConvert, "type_error:js"
			}
			t, ok := types[typeDesc]
			if !ok {
				return fail(errType, "Unsupported type %q for parameter %q.", typeDesc, param)
			}
			expT = t
			s, isStr := value.(string)
			if !isStr {
				return fail(errType, "Incorrect type for parameter %q. Expected type String, got %s. Parameter value: %s.", param, typeOf(value), pyRepr(value))
			}
			nested := ""
			if typeDesc == "Array" || typeDesc == "ArrayList" || typeDesc == "array" {
				nested = itemsType(details)
				nt, ok := types[nested]
				if !ok {
					return fail(errType, "Unsupported item type %q for parameter %q.", nested, param)
				}
				nestedT = nt
			}
			v, err := convert(s, typeDesc, nested)
			if err != nil {
				return fail(errType, "Parameter %q: %v.", param, err)
			}
			value = v
		default:
			t, ok := pythonTypes[typeDesc]
			if !ok {
				return fail("type_error:simple", "Unsupported type %q for parameter %q.", typeDesc, param)
			}
			expT = t
			if typeDesc == "array" || typeDesc == "tuple" {
				if it := itemsType(details); it != "" {
					nestedT = pythonTypes[it]
				}
			}
			// Python's int → float promotion.
			if typeDesc == "float" {
				if n, ok := numeric(value); ok && typeIs(value, tInt) {
					value = pyFloat(n)
				}
			}
		}

		ok, isVariable := typeChecker(value, possible, expT, nestedT)
		if !ok {
			if nestedT != tUnknown && typeIs(value, expT) {
				return fail("type_error:nested", "Nested type checking failed for parameter %q. Expected outer type %s with inner type %s. Parameter value: %s.", param, typeDesc, nestedT, pyRepr(value))
			}
			return fail("type_error:simple", "Incorrect type for parameter %q. Expected type %s, got %s. Parameter value: %s.", param, typeDesc, typeOf(value), pyRepr(value))
		}
		if !isVariable {
			var r Result
			checked := true
			switch {
			case expT == tDict:
				r = dictChecker(param, value.(map[string]any), possible)
			case expT == tList && nestedT == tDict:
				r = listDictChecker(param, value.([]any), possible)
			case expT == tStr:
				r = stringChecker(param, value.(string), possible)
			case expT == tList:
				r = listChecker(param, value.([]any), possible)
			default:
				checked = false
			}
			if checked {
				if !r.OK {
					return r
				}
				continue
			}
		}
		if !pyIn(value, possible) {
			return fail("value_error:others", "Invalid value for parameter %q: %s. Expected one of %s.", param, pyRepr(value), pyRepr(possible))
		}
	}
	for _, param := range sortedKeys(exp.Params) {
		if _, ok := c.Args[param]; !ok && !pyIn("", pyNorm(exp.Params[param]).([]any)) {
			return fail("simple_function_checker:missing_optional", "Optional parameter %q not provided and not marked as optional.", param)
		}
	}
	return pass()
}

// pythonTypes is BFCL's PYTHON_TYPE_MAPPING.
var pythonTypes = map[string]pyType{
	"string": tStr, "integer": tInt, "float": tFloat, "boolean": tBool,
	"array": tList, "tuple": tList, "dict": tDict, "any": tStr,
}

func itemsType(details map[string]any) string {
	items, _ := details["items"].(map[string]any)
	t, _ := items["type"].(string)
	return t
}

// possibleAnswerType is get_possible_answer_type: the type of the first
// accepted value that is not "".
func possibleAnswerType(possible []any) (pyType, bool) {
	for _, a := range possible {
		if s, ok := a.(string); ok && s == "" {
			continue
		}
		return typeOf(a), true
	}
	return tUnknown, false
}

// typeChecker is type_checker. It returns whether the value passes and
// whether it is a "variable": the ground truth's values are of another type
// than the declared one (BFCL writes a variable name as a string where the
// parameter is, say, an integer), in which case the value is compared as is.
// Nested types are checked one level deep, as in BFCL.
func typeChecker(value any, possible []any, expT, nestedT pyType) (ok, isVariable bool) {
	paT, hasPA := possibleAnswerType(possible)
	isVariable = hasPA && paT != expT
	if typeIs(value, expT) {
		if nestedT == tUnknown {
			return true, isVariable
		}
		items, _ := value.([]any)
		for _, pa := range possible {
			flag := true
			if paList, ok := pa.([]any); ok {
				for _, it := range items {
					if ok, _ := typeChecker(it, paList, nestedT, tUnknown); !ok {
						flag = false
						break
					}
				}
			}
			if flag {
				return true, isVariable
			}
		}
		return false, false
	}
	if hasPA && typeIs(value, paT) {
		return true, true
	}
	return false, false
}

// stringChecker is string_checker: standardized model string among the
// standardized accepted strings.
func stringChecker(param, value string, possible []any) Result {
	std := Standardize(value)
	for _, p := range possible {
		if s, ok := p.(string); ok && Standardize(s) == std {
			return pass()
		}
	}
	return fail("value_error:string", "Invalid value for parameter %q: %q. Expected one of %s. Case insensitive.", param, value, pyRepr(possible))
}

// standardizeItems standardizes the string items of a list (one level).
func standardizeItems(list []any) []any {
	out := make([]any, len(list))
	for i, e := range list {
		if s, ok := e.(string); ok {
			out[i] = Standardize(s)
		} else {
			out[i] = e
		}
	}
	return out
}

// listChecker is list_checker: the list, with its string items
// standardized, must equal one accepted list (order matters). As in BFCL, an
// accepted "" counts as the empty list.
func listChecker(param string, value []any, possible []any) Result {
	std := standardizeItems(value)
	for _, p := range possible {
		items, ok := pyIter(p)
		if !ok {
			continue
		}
		if pyEq(std, standardizeItems(items)) {
			return pass()
		}
	}
	return fail("value_error:list/tuple", "Invalid value for parameter %q: %s. Expected one of %s.", param, pyRepr(value), pyRepr(possible))
}

// dictChecker is dict_checker: for some accepted dict (skipping ""), every
// model key is an accepted key whose (standardized, if a string) value is
// among that key's accepted values, and every accepted key the model left
// out accepts "".
func dictChecker(param string, value map[string]any, possible []any) Result {
	r := fail("dict_checker:unclear", "Invalid value for parameter %q: %s.", param, pyRepr(value))
	for _, p := range possible {
		if s, ok := p.(string); ok && s == "" {
			continue
		}
		pa, ok := p.(map[string]any)
		if !ok {
			continue
		}
		flag := true
		for _, key := range sortedKeys(value) {
			accepted, ok := pa[key]
			if !ok {
				r = fail("value_error:dict_key", "Unexpected dict key parameter: %q.", key)
				flag = false
				break
			}
			v := value[key]
			if s, ok := v.(string); ok {
				v = Standardize(s)
			}
			list, ok := accepted.([]any)
			if !ok {
				list = []any{accepted}
			}
			if !pyIn(v, standardizeItems(list)) {
				r = fail("value_error:dict_value", "Invalid value for parameter %q: %s. Expected one of %s.", key, pyRepr(value[key]), pyRepr(standardizeItems(list)))
				flag = false
				break
			}
		}
		for _, key := range sortedKeys(pa) {
			if _, ok := value[key]; ok {
				continue
			}
			list, ok := pa[key].([]any)
			if !ok || !pyIn("", list) {
				r = fail("value_error:dict_key", "Missing dict key parameter: %q.", key)
				flag = false
				break
			}
		}
		if flag {
			return pass()
		}
	}
	return r
}

// listDictChecker is list_dict_checker: the list of dicts must match one
// accepted list of dicts position by position.
func listDictChecker(param string, value []any, possible []any) Result {
	r := fail("list_dict_checker:unclear", "Invalid value for parameter %q: %s.", param, pyRepr(value))
	for _, p := range possible {
		n, ok := pyLen(p)
		if !ok {
			continue
		}
		if n != len(value) {
			r = fail("value_error:list_dict_count", "Wrong number of dictionaries in the list.")
			continue
		}
		items, _ := pyIter(p)
		flag := true
		for i := range value {
			d, ok := value[i].(map[string]any)
			if !ok || i >= len(items) {
				r = fail("list_dict_checker:unclear", "Item %d of parameter %q is not a dict.", i, param)
				flag = false
				break
			}
			r = dictChecker(param, d, []any{items[i]})
			if !r.OK {
				flag = false
				break
			}
		}
		if flag {
			return pass()
		}
	}
	return r
}
