package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DefaultRegexTimeout bounds one `pattern` match on the backtracking engine
// (regexp2). ECMA-262 regexps backtrack, so a hostile pattern/string pair
// could otherwise pin a core.
const DefaultRegexTimeout = 100 * time.Millisecond

// JSON Schema says `pattern` is ECMA-262, which Go's RE2 is not (no
// lookaround or backreferences; a different \s, \b and `.`). Every pattern
// is compiled by regexp2 in ECMAScript mode first, so what is a valid
// pattern and what an error says never depends on the engine. A pattern in
// the subset where Go's regexp decides every string as regexp2 does
// (re2Form) then matches with Go's regexp: linear time, no timeout, so a
// trivial pattern is never refused because the machine is busy. The rest
// (lookaround, backreferences, \s, \b, \u escapes, ...) stays on regexp2,
// with a match timeout.
func ecmaEngine(timeout time.Duration) jsonschema.RegexpEngine {
	return func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		if t, ok := re2Form(s); ok {
			if g, err := regexp.Compile(t); err == nil {
				return &linearRegexp{re: g, src: s}, nil
			}
		}
		re.MatchTimeout = timeout
		return &ecmaRegexp{re: re, timeout: timeout}, nil
	}
}

// linearRegexp is a pattern translated to Go's regexp; String is the
// pattern as the schema wrote it, for error messages.
type linearRegexp struct {
	re  *regexp.Regexp
	src string
}

func (l *linearRegexp) MatchString(s string) bool { return l.re.MatchString(s) }
func (l *linearRegexp) String() string            { return l.src }

// ecmaRegexp adapts regexp2 to jsonschema.Regexp. A match that runs out of
// time has no answer: jsonschema.Regexp can only say yes or no, and either
// would be a verdict the engine did not reach (a valid value refused, or an
// invalid one let through). So it panics with a *PatternTimeout, which
// compiledSchema.validate recovers and returns as its own error.
type ecmaRegexp struct {
	re      *regexp2.Regexp
	timeout time.Duration
}

func (e *ecmaRegexp) MatchString(s string) bool {
	ok, err := e.re.MatchString(s)
	if err != nil {
		panic(&PatternTimeout{Pattern: e.re.String(), Limit: e.timeout, Length: utf8.RuneCountInString(s)})
	}
	return ok
}

func (e *ecmaRegexp) String() string { return e.re.String() }

// re2Form translates an ECMA-262 pattern into Go regexp syntax when it is in
// a subset where the two engines decide every string alike, and reports
// false for anything outside it. Whether a string contains a match does not
// depend on an engine's preference order (backtracking or leftmost-first),
// only on the language the pattern denotes, so the subset is about syntax
// whose meaning is the same in both (regexp2's ECMAScript mode is the
// reference: the grammar package's automata are tested against it):
//
//   - literals other than the syntax characters; escapes of ASCII
//     punctuation; \n \r \t \f \v; \d \D \w \W (ASCII in both);
//   - `.` outside a class, as [^\n\r] (regexp2's `.`; Go's excludes only \n);
//   - classes [..] and [^..] of literals, ranges and the escapes above — not
//     empty ([] matches nothing in ECMA-262, starts a class with ] in Go) and
//     with no nested [ (Go reads [:alpha:] inside one);
//   - groups ( ) and (?: ), alternation, ^ and $ (no multiline flag: both
//     mean the ends of the input), and the quantifiers * + ? {n} {n,} {n,m},
//     greedy or lazy, each after an atom.
//
// Left to regexp2: \s (ECMA-262's includes U+00A0, U+2028, \v, ...), \b and \B
// (regexp2 counts non-ASCII letters as word characters there), lookaround,
// backreferences, named groups, \u, \x, \c, \0 and \p escapes, a lone { or }.
func re2Form(p string) (string, bool) {
	var b strings.Builder
	b.Grow(len(p) + 8)
	atom := false // the last thing written may take a quantifier
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '\\':
			if i+1 >= len(p) || !safeEscape(p[i+1]) {
				return "", false
			}
			b.WriteString(p[i : i+2])
			i += 2
			atom = true
		case '.':
			b.WriteString(`[^\n\r]`)
			i++
			atom = true
		case '[':
			n, ok := re2Class(p[i:])
			if !ok {
				return "", false
			}
			b.WriteString(p[i : i+n])
			i += n
			atom = true
		case '(':
			if strings.HasPrefix(p[i:], "(?:") {
				b.WriteString("(?:")
				i += 3
			} else if strings.HasPrefix(p[i:], "(?") {
				return "", false
			} else {
				b.WriteByte('(')
				i++
			}
			atom = false
		case ')':
			b.WriteByte(')')
			i++
			atom = true
		case '|', '^', '$':
			b.WriteByte(c)
			i++
			atom = false
		case '*', '+', '?', '{':
			if !atom {
				return "", false
			}
			n := 1
			if c == '{' {
				if n = re2Repeat(p[i:]); n == 0 {
					return "", false
				}
			}
			if i+n < len(p) && p[i+n] == '?' { // lazy
				n++
			}
			b.WriteString(p[i : i+n])
			i += n
			atom = false
		case ']', '}':
			return "", false
		default:
			b.WriteByte(c) // any other byte, the bytes of a non-ASCII rune included
			i++
			atom = true
		}
	}
	return b.String(), true
}

// safeEscape: the escapes (after a backslash) that mean the same in both
// engines, inside and outside a class.
func safeEscape(c byte) bool {
	switch c {
	case 'd', 'D', 'w', 'W', 'n', 'r', 't', 'f', 'v':
		return true
	}
	return c < utf8.RuneSelf && c > ' ' && c != 0x7f && !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
}

// re2Class returns the length of the class that starts p (at its '['), or
// false when it is outside re2Form's subset.
func re2Class(p string) (int, bool) {
	i := 1
	if i < len(p) && p[i] == '^' {
		i++
	}
	if i < len(p) && p[i] == ']' { // [] or [^]
		return 0, false
	}
	for i < len(p) {
		switch p[i] {
		case ']':
			return i + 1, true
		case '[':
			return 0, false
		case '\\':
			if i+1 >= len(p) || !safeEscape(p[i+1]) {
				return 0, false
			}
			i += 2
		default:
			i++
		}
	}
	return 0, false // unterminated
}

// re2Repeat returns the length of a {n}, {n,} or {n,m} at the start of p,
// 0 when p does not start with one (ECMA-262 then reads { as a literal).
func re2Repeat(p string) int {
	i, digits := 1, 0
	for ; i < len(p) && '0' <= p[i] && p[i] <= '9'; i++ {
		digits++
	}
	if digits == 0 || i >= len(p) {
		return 0
	}
	if p[i] == ',' {
		for i++; i < len(p) && '0' <= p[i] && p[i] <= '9'; i++ {
		}
	}
	if i < len(p) && p[i] == '}' {
		return i + 1
	}
	return 0
}

// schemaCache compiles JSON Schemas (draft 2020-12) once per distinct
// document: tools are registered once per version and called many times, and
// several providers often register the same schema, so the key is the hash of
// the schema bytes rather than the tool name.
type schemaCache struct {
	regexTimeout time.Duration
	mu           sync.Mutex
	byHash       map[[32]byte]*compiledSchema
}

// compiledSchema is a validator plus what lenient mode needs from the raw
// document (defaults to substitute for nulls).
type compiledSchema struct {
	sch      *jsonschema.Schema
	defaults *defaultsNode // nil when the schema declares no property defaults
}

func newSchemaCache(regexTimeout time.Duration) *schemaCache {
	if regexTimeout <= 0 {
		regexTimeout = DefaultRegexTimeout
	}
	return &schemaCache{regexTimeout: regexTimeout, byHash: map[[32]byte]*compiledSchema{}}
}

// emptySchema stands in for a tool that declares no parameters: any object.
var emptySchema = json.RawMessage(`{"type":"object"}`)

func (c *schemaCache) compile(raw json.RawMessage) (*compiledSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = emptySchema
	}
	key := sha256.Sum256(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cs, ok := c.byHash[key]; ok {
		return cs, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.DefaultDraft(jsonschema.Draft2020)
	comp.UseRegexpEngine(ecmaEngine(c.regexTimeout))
	// No loader: a tool schema must be self-contained; a remote $ref would
	// make validation depend on the network.
	comp.UseLoader(noLoader{})
	url := "mem:///" + hex.EncodeToString(key[:8]) + ".json"
	if err := comp.AddResource(url, doc); err != nil {
		return nil, err
	}
	sch, err := comp.Compile(url)
	if err != nil {
		return nil, err
	}
	cs := &compiledSchema{sch: sch, defaults: collectDefaults(doc)}
	c.byHash[key] = cs
	return cs, nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema references are not allowed: %s", url)
}

// validate checks v (decoded with json.Number, as jsonschema expects) and
// returns every violation with its JSON pointer, or nil. A `pattern` match
// that ran out of time is no violation: the value was not judged, and the
// *PatternTimeout says so (its Tool and Output are for the caller to set).
func (cs *compiledSchema) validate(v any) (fes []FieldError, timedOut *PatternTimeout) {
	// Defence in depth: a validator bug must fail the call, not the process.
	defer func() {
		if p := recover(); p != nil {
			if pt, ok := p.(*PatternTimeout); ok {
				fes, timedOut = nil, pt
				return
			}
			fes = []FieldError{{Pointer: "", Message: fmt.Sprintf("validator failed: %v", p)}}
		}
	}()
	err := cs.sch.Validate(v)
	if err == nil {
		return nil, nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []FieldError{{Pointer: "", Message: err.Error()}}, nil
	}
	// The basic output is the flat list of failing units; units with an
	// Error are the leaves, the causes a person can act on.
	out := ve.BasicOutput()
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		fes = append(fes, FieldError{Pointer: u.InstanceLocation, Message: u.Error.String()})
	}
	if len(fes) == 0 {
		fes = append(fes, FieldError{Pointer: "", Message: ve.Error()})
	}
	return fes, nil
}
