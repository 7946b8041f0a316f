package understand

import (
	"encoding/json"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// Whether a request is for a tool at all, read from the words alone: does
// it name what the tool is about, and can each argument the tool needs be
// taken from it by type. Both are questions a person asks before calling
// anything; a similarity score answers neither (a question about a triangle's
// area is "similar" to a body-mass-index tool: both have a height).

// toolVerbs are the words of a tool's name that say how it works, not
// what it is about: a request need not repeat them.
var toolVerbs = map[string]bool{
	"get": true, "set": true, "calculate": true, "calc": true, "compute": true, "find": true,
	"search": true, "determine": true, "estimate": true, "estimator": true, "locate": true,
	"fetch": true, "retrieve": true, "create": true, "make": true, "check": true, "predict": true,
	"analyze": true, "analyse": true, "analyzer": true, "analysis": true, "lookup": true,
	"look": true, "up": true, "query": true, "list": true, "show": true, "display": true,
	"generate": true, "convert": true, "converter": true, "evaluate": true, "identify": true,
	"info": true, "information": true, "data": true, "details": true, "detail": true,
	"by": true, "of": true, "the": true, "a": true, "an": true, "for": true, "to": true, "in": true,
	"and": true, "or": true, "with": true, "from": true, "on": true, "at": true, "all": true,
	"tool": true, "api": true, "service": true, "helper": true, "util": true, "utils": true,
	"v1": true, "v2": true, "new": true, "do": true, "run": true, "perform": true, "request": true,
	"nearby": true, "near": true, "local": true, "specific": true, "custom": true, "simple": true,
	"advanced": true, "basic": true, "total": true, "current": true, "latest": true, "top": true,
	"math": true, "tools": true, "finder": true, "search_engine": true, "engine": true,
}

// reNameSplit splits a tool's name into its parts (dots, underscores,
// dashes; camel case is split by embeddings.Tokens).
var reNameSplit = MustPattern(`[._\-/\s]+`)

// Subjects are the words of a tool's name that say what it is about
// ("get_cooking_time" → cooking, time), lower case.
func Subjects(name string) []string {
	var out []string
	for _, part := range reNameSplit.Split(name, -1) {
		for _, w := range embeddings.Tokens(part) {
			w = strings.ToLower(w)
			if len(w) < 2 || toolVerbs[w] || reDigit.MatchString(w) {
				continue
			}
			out = append(out, w)
		}
	}
	return out
}

// AsksFor reports whether a request asks for something the tool is
// about: it names one of the tool name's subjects (Subjects) up to the
// word's ending ("schedule" / "scheduled", "law" / "lawyer"), or asks for
// a value of a kind the name says ("when" for a date, an amount of money
// for a currency), or names one of the values a parameter of it takes
// (its enum). A name with no subject (only verbs) asks nothing of the
// request.
func AsksFor(request, toolName string, params json.RawMessage) bool {
	subs := Subjects(toolName)
	if len(subs) == 0 {
		return true
	}
	return len(NamedSubjects(request, toolName)) > 0 || asksKind(request, subs) || namesEnum(request, params)
}

// NamedSubjects are the subjects of a tool's name the request names.
func NamedSubjects(request, toolName string) []string {
	ws := requestWords(request)
	var out []string
	for _, s := range Subjects(toolName) {
		for _, w := range ws {
			if sameRoot(s, w) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// requestWords are the request's words that may name a subject: a word
// right after a number is its unit ("12 amperes"), a value's kind, not
// what the request is about.
func requestWords(request string) []string {
	text := reUnitAfterNumber.ReplaceAllString(strings.ToLower(NumbersInWords(request)), " ")
	return embeddings.Tokens(text)
}

var reUnitAfterNumber = MustPattern(`\d\s*[\p{L}]+`)

// kindWords: a request that asks with these words asks for a value of
// the kind a tool's name says.
var (
	reWhen     = MustPattern(`(?i)^\s*(?:when|what\s+(?:date|day|year|time))\b|\bwhen\s+(?:was|is|did|does|will)\b`)
	reCurrency = MustPattern(`(?i)\b(?:usd|eur|gbp|jpy|cad|aud|chf|cny|inr|euros?|dollars?|pounds?\s+sterling|yen|yuan|rupees?|francs?|pesos?|currenc(?:y|ies)|exchange\s+rate)\b|[$€£¥]\s*\d`)
	dateKinds  = map[string]bool{"date": true, "time": true, "year": true, "when": true, "day": true}
	moneyKinds = map[string]bool{"currency": true, "exchange": true, "money": true, "forex": true}
)

// AsksKind reports whether the request asks for a value of the kind the
// tool's name says ("when was …" of get_event_date, "100 euro in USD" of
// currency_conversion): a request for it whatever its other words.
func AsksKind(request, toolName string) bool { return asksKind(request, Subjects(toolName)) }

func asksKind(request string, subs []string) bool {
	for _, s := range subs {
		if dateKinds[s] && reWhen.MatchString(request) || moneyKinds[s] && reCurrency.MatchString(request) {
			return true
		}
	}
	return false
}

// namesEnum: the request names one of the values a parameter takes
// (its enum): "set the air conditioner to COOL mode" asks for the tool
// whose mode is one of COOL, HEAT, DRY, however it is named.
func namesEnum(request string, params json.RawMessage) bool {
	if len(params) == 0 {
		return false
	}
	var s struct {
		Properties map[string]*param `json:"properties"`
	}
	if json.Unmarshal(params, &s) != nil {
		return false
	}
	var ws map[string]bool
	for _, p := range s.Properties {
		if p == nil || len(p.Enum) == 0 {
			continue
		}
		if ws == nil {
			ws = map[string]bool{}
			for _, w := range requestWords(request) {
				if len(w) >= 3 && !stop[w] {
					ws[w] = true
				}
			}
		}
		for _, e := range p.Enum {
			str, ok := e.(string)
			if !ok {
				continue
			}
			toks := embeddings.Tokens(strings.ToLower(str))
			if len(toks) == 0 || len(toks) > 3 {
				continue
			}
			all := true
			for _, t := range toks {
				if !ws[t] {
					all = false
					break
				}
			}
			if all {
				return true
			}
		}
	}
	return false
}

// sameRoot: two words with one root — equal, equal once stemmed, or one
// the other with an ending ("law", "lawyer"; "intersect", "intersection").
func sameRoot(a, b string) bool {
	if a == b {
		return true
	}
	sa, sb := embeddings.Stem(a), embeddings.Stem(b)
	if sa == sb {
		return true
	}
	short, long := sa, sb
	if len(short) > len(long) {
		short, long = long, short
	}
	return len(short) >= 3 && strings.HasPrefix(long, short) && len(long)-len(short) <= 4
}

// param is what the typed checks read of a parameter's schema.
type param struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Default     any    `json:"default"`
	Enum        []any  `json:"enum"`
	Items       *param `json:"items"`
}

func (p *param) typ() string {
	switch t := p.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

func isNumberType(t string) bool {
	return t == "integer" || t == "number" || t == "float" || t == "double" || t == "long"
}

// placeParam and timeParam: words of a parameter's name that say it takes
// a place, or a time.
var (
	placeParam = map[string]bool{"location": true, "city": true, "country": true, "state": true,
		"region": true, "place": true, "destination": true, "origin": true, "address": true,
		"town": true, "county": true}
	timeParam = map[string]bool{"date": true, "season": true, "year": true, "month": true,
		"day": true, "period": true, "time": true, "week": true, "timeframe": true, "duration": true}
	rateParam = map[string]bool{"rate": true, "percent": true, "percentage": true, "ratio": true,
		"fraction": true, "probability": true, "discount": true, "tax": true, "interest": true,
		"growth": true, "return": true, "yield": true, "share": true, "proportion": true, "pct": true}
)

// Unfilled names a required parameter of a tool (its JSON Schema) that
// the request cannot fill with a value of the right type from its own
// words, "" when every one can: a number when the request states no
// amount (a number in a word such as "CO2" is a name, not an amount), a
// list of numbers likewise, a number that is no rate when the request's
// only amounts are percentages, a place when it holds no proper name, a
// time when it says no when. Parameters with a default or a fixed set of
// values are never counted: the tool does not need them from the request.
func Unfilled(request string, schema json.RawMessage) string {
	var s struct {
		Required   []string          `json:"required"`
		Properties map[string]*param `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	q := readQuantities(request)
	for _, r := range s.Required {
		p, ok := s.Properties[r]
		if !ok || p == nil || p.Default != nil || len(p.Enum) > 0 {
			continue
		}
		t := p.typ()
		switch {
		case isNumberType(t):
			if !q.any {
				return r
			}
			if !q.plain && !nameHas(r, rateParam) && !strings.Contains(strings.ToLower(p.Description), "percent") &&
				!strings.Contains(strings.ToLower(p.Description), "rate") {
				return r // only percentages, and this takes no rate
			}
		case (t == "array" || t == "tuple") && p.Items != nil && isNumberType(p.Items.typ()):
			if !q.any {
				return r
			}
		case t == "string" && nameHas(r, placeParam):
			if !NamesPlace(request) {
				return r
			}
		case t == "string" && nameHas(r, timeParam):
			if !StatesTime(request) {
				return r
			}
		}
	}
	return ""
}

// quantities is what amounts a request states.
type quantities struct {
	any   bool // some amount at all
	plain bool // some amount that is not a percentage
}

// reAmount is a number standing alone (not inside a word such as "CO2"
// or "3x"), with what follows it.
var reAmount = MustPattern(`(?:^|[^\p{L}\p{N}_.])[-+$€£]?\d[\d,]*(?:\.\d+)?(\s*(?:%|percent\b|per\s*cent\b))?`)

func readQuantities(request string) quantities {
	var q quantities
	text := NumbersInWords(request)
	for _, m := range reAmount.FindAllStringSubmatchIndex(text, -1) {
		q.any = true
		if m[3] < 0 {
			q.plain = true
		}
	}
	if !q.any {
		for _, w := range lowerWords(request) {
			if quantityWords[w] || quantityWords[strings.TrimSuffix(w, "s")] {
				q.any, q.plain = true, true
				break
			}
		}
	}
	return q
}

// nameHas reports whether a parameter name (snake_case or camelCase) has
// one of the words.
func nameHas(param string, words map[string]bool) bool {
	for _, w := range embeddings.Tokens(param) {
		if words[strings.ToLower(w)] {
			return true
		}
	}
	return false
}
