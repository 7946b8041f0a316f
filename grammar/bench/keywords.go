package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// The per-keyword section of CONFORMANCE.md: for each keyword, how many
// schemas of the run use it, how many of those compiled (compile runs
// without Lenient, so every form they use is enforced exactly), and the
// compile errors reported at it grouped by refused form, each with why.
// The counts come from the run; the texts below say what the grammar
// package does (grammar/negate.go, contains.go, unique.go, schema.go).

// kwExact is what the grammar enforces exactly, per keyword.
var kwExact = map[string]string{
	"type": "all types; integer over exponent-free lexemes and by value",
	"enum": "scalars, and container values as literals", "const": "as enum",
	"properties": "any schemas, recursion through $ref", "required": "tracked per object at match time",
	"additionalProperties": "false or a schema", "patternProperties": "up to 6 patterns per object (2^6 key categories)",
	"propertyNames": "a string schema intersected with the key automaton",
	"minProperties": "counted at match time", "maxProperties": "counted at match time",
	"dependentRequired": "tracked at match time", "dependencies": "arrays (required) and schemas (as dependentSchemas)",
	"dependentSchemas": "(key absent) ∨ schema",
	"items":            "a schema, a tuple (draft 4-2019 array form)", "prefixItems": "tuples with items after them",
	"additionalItems": "false or a schema after a tuple", "minItems": "counted", "maxItems": "counted",
	"contains":    "one to three per array, minContains 0 or 1, when the contains schema has an exact complement: a copy of the item chain per set of witnesses seen",
	"uniqueItems": "over a finite item domain of at most 64 scalar values (enums, booleans, bounded integers): the set of values seen is automaton state; over strings, objects and arrays whose every prefix has infinitely many completions: the matcher keeps the items written and refuses the byte that would end a duplicate (values compared decoded and canonically)",
	"minLength":   "code points", "maxLength": "code points", "pattern": "ECMA-262 regexes, search semantics; lookahead by intersection where the rest of the pattern is a sequence, alternation or optional group; no lookbehind or backreferences",
	"format":  "date, time, date-time, duration, email, hostname, ipv4, ipv6, uri, uuid … as automata (grammar/formats.go)",
	"minimum": "decimal comparison automata", "maximum": "decimal comparison automata",
	"exclusiveMinimum": "as minimum", "exclusiveMaximum": "as maximum", "multipleOf": "remainder automata over exponent-free lexemes",
	"allOf": "conjunction (automaton products), up to 128 object/array alternatives",
	"anyOf": "union", "oneOf": "disjoint branches as anyOf; overlapping ones as B_i ∧ ¬B_j with exact complements",
	"not":  "complement keyword by keyword (grammar/negate.go): types, scalars, bounds, patterns, required, properties, tuples, items (as contains of the complement), contains, propertyNames / patternProperties / additionalProperties (as 'some property fails', up to 3 per object), applicators",
	"if":   "(if ∧ then) ∨ (¬if ∧ else) when if has an exact complement",
	"$ref": "local and in-document references, recursion",
}

// kwWhy explains refused forms: the first entry whose substring occurs in
// the error message.
var kwWhy = []struct{ kw, sub, why string }{
	{"uniqueItems", "finitely many completions", "an item with a prefix of finitely many completions (null, booleans, numbers under the digit bound, constants, a pattern that ends in a literal): a value already written could be the only way on, a dead end"},
	{"uniqueItems", "maxLength bounds", "bounded strings: a value already written could be the only way to finish one, a dead end"},
	{"uniqueItems", "cannot always take another", "closed objects or bounded arrays: a value already written could be the only way to finish one, a dead end"},
	{"uniqueItems", "more than 64", "an unbounded domain beyond what the matcher-side check takes"},
	{"uniqueItems", "objects or arrays", "container items the matcher-side check does not take"},
	{"uniqueItems", "automaton edges", "the subset automaton over the domain is beyond the edge budget"},
	{"not", "'some property fails' on one object", "more than 3 'some property fails' conjoined on one object: 2^k copies of the key loop, beyond the size budget"},
	{"not", "'some property fails' with", "'some property fails' under a key bound beside declared or required keys: the copies' key count would have to share the runtime budget for them, not built"},
	{"not", "'some property fails' on an object of up to", "the copies are unrolled per key count: more than 32 keys is beyond the size budget"},
	{"not", "over format", "format automata may under-approximate a format (safe positively); their complement would accept valid strings"},
	{"not", "numerator too large", "the remainder automaton of that multipleOf is beyond the size budget"},
	{"not", "additionalItems", "'some item after the tuple fails': the contains would have to skip the tuple positions, not built"},
	{"not", "const/enum", "'any object or array but this one': needs an inequality witness over the structure"},
	{"not", "items after a tuple", "an existential over the items after the tuple"},
	{"not", "", "no exact complement for the form"},
	{"allOf", "alternatives", "the conjunction multiplies object/array alternatives beyond 128 (size budget)"},
	{"anyOf", "alternatives", "beyond 128 object/array alternatives (size budget)"},
	{"oneOf", "no exact complement", "overlapping branches need a complement that is not exact (see not)"},
	{"if", "complement", "if has no exact complement (see not)"},
	{"pattern", "lookahead", "lookahead inside a repetition (checked at every step) or nested: not built"},
	{"pattern", "lookbehind", "lookbehind: not built"},
	{"pattern", "inside a pattern with lookahead", "^ or $ in the middle of a pattern with lookahead: not built"},
	{"pattern", "word boundary", "\\b needs lookaround"},
	{"patternProperties", "more than 6", "2^n key categories: beyond the size budget"},
	{"patternProperties", "lookahead", "lookahead in a key pattern inside a repetition or nested"},
	{"format", "", "a format with no exact automaton (regex: the language of ECMA-262 regexes is not regular)"},
	{"contains", "", "beyond the supported contains forms (maxContains, minContains > 1, more than 3 per array, with uniqueItems, or no exact complement)"},
	{"unevaluatedProperties", "", "depends on what sibling applicators evaluated: not implemented"},
	{"$ref", "unknown anchor", "an anchor the document does not define"},
	{"$ref", "", "an external reference not in the document (only local ones are resolved)"},
	{"", "too large", "automaton size budget"},
}

func whyRefused(kw, msg string) string {
	for _, w := range kwWhy {
		if (w.kw == kw || w.kw == "") && strings.Contains(msg, w.sub) {
			return w.why
		}
	}
	return ""
}

var (
	errMsgRE  = regexp.MustCompile(`^grammar: ?(\S*) at "(?:[^"\\]|\\.)*": `)
	quotedRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	numbersRE = regexp.MustCompile(`\d+`)
)

// refusedForm is an error message with its specifics (pointers, names,
// numbers) blanked, so that the same form groups.
func refusedForm(msg string) string {
	msg = errMsgRE.ReplaceAllString(msg, "")
	if i := strings.Index(msg, " ("); i > 0 {
		msg = msg[:i]
	}
	msg = quotedRE.ReplaceAllString(msg, "…")
	msg = numbersRE.ReplaceAllString(msg, "N")
	if len(msg) > 90 {
		msg = msg[:90] + "…"
	}
	return strings.TrimSpace(msg)
}

// schemaKeywords adds the keywords used anywhere in schema s to set
// (walking subschema positions, not property names or enum values).
func schemaKeywords(s any, set map[string]bool) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	for k, x := range m {
		set[k] = true
		switch k {
		case "properties", "patternProperties", "definitions", "$defs", "dependentSchemas", "dependencies":
			if mm, ok := x.(map[string]any); ok {
				for _, y := range mm {
					schemaKeywords(y, set)
				}
			}
		case "allOf", "anyOf", "oneOf", "prefixItems", "items":
			if a, ok := x.([]any); ok {
				for _, y := range a {
					schemaKeywords(y, set)
				}
			} else {
				schemaKeywords(x, set)
			}
		case "not", "if", "then", "else", "contains", "propertyNames", "additionalProperties", "additionalItems",
			"unevaluatedProperties", "unevaluatedItems", "contentSchema":
			schemaKeywords(x, set)
		}
	}
}

// writeKeywords writes the section from the bench rows and the schemas of
// the records under dataDir (the jsonschemabench directory).
func writeKeywords(w io.Writer, rows []map[string]any, dataDir string) error {
	files, err := filepath.Glob(filepath.Join(dataDir, "*.jsonl*"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("keywords: no records under %s", dataDir)
	}
	recs, err := LoadRecords(files)
	if err != nil {
		return err
	}
	byID := map[string]*Record{}
	for _, r := range recs {
		byID[r.File+"\x00"+r.ID] = r
	}
	uses := map[string]int{}
	compiled := map[string]int{}
	refused := map[string]int{}
	forms := map[string]map[string]int{}
	for _, row := range rows {
		st := str(row, "status")
		if st == StatusInputError {
			continue
		}
		set := map[string]bool{}
		if rec := byID[str(row, "file")+"\x00"+str(row, "id")]; rec != nil {
			if p, err := rec.Parse(); err == nil {
				var s any
				if json.Unmarshal(p.Schema, &s) == nil {
					schemaKeywords(s, set)
				}
			}
		}
		ok, _ := row["compiled"].(bool)
		for k := range set {
			if _, known := kwExact[k]; !known {
				continue
			}
			uses[k]++
			if ok {
				compiled[k]++
			}
		}
		if st == StatusCompileError {
			msg := str(row, "error")
			kw := "other"
			if m := kwRE.FindStringSubmatch(msg); m != nil {
				kw = m[1]
			}
			refused[kw]++
			if forms[kw] == nil {
				forms[kw] = map[string]int{}
			}
			forms[kw][refusedForm(msg)+"\x00"+whyRefused(kw, msg)]++
		}
	}
	fmt.Fprintln(w, "\n### Per keyword: exact and refused forms")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Counts over this run: schemas using the keyword anywhere, those of them that compiled (compile is not lenient: every form they use is enforced exactly, none loosened), and the compile errors reported at the keyword (a schema counts once, at its first refusal). Refusals are the forms the grammar cannot enforce exactly: non-regular, or beyond a size budget; it never under-constrains.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| keyword | schemas using it | compiled | refused at it | exact forms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---|")
	kws := sortedKeys(kwExact)
	for k := range refused {
		if _, ok := kwExact[k]; !ok {
			kws = append(kws, k)
		}
	}
	sort.SliceStable(kws, func(i, j int) bool {
		if refused[kws[i]] != refused[kws[j]] {
			return refused[kws[i]] > refused[kws[j]]
		}
		if uses[kws[i]] != uses[kws[j]] {
			return uses[kws[i]] > uses[kws[j]]
		}
		return kws[i] < kws[j]
	})
	for _, k := range kws {
		fmt.Fprintf(w, "| `%s` | %d | %d | %d | %s |\n", k, uses[k], compiled[k], refused[k], kwExact[k])
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Refused forms (count: message form — why):")
	fmt.Fprintln(w)
	for _, k := range kws {
		if refused[k] == 0 {
			continue
		}
		fs := forms[k]
		keys := sortedKeys(fs)
		sort.SliceStable(keys, func(i, j int) bool { return fs[keys[i]] > fs[keys[j]] })
		fmt.Fprintf(w, "- `%s` %d:", k, refused[k])
		for _, f := range keys {
			form, why, _ := strings.Cut(f, "\x00")
			if why != "" {
				why = " — " + why
			}
			fmt.Fprintf(w, "\n  - %d: %s%s", fs[f], form, why)
		}
		fmt.Fprintln(w)
	}
	return nil
}
