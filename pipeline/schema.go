package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DefaultRegexTimeout bounds one `pattern` match. ECMA-262 regexps
// backtrack, so a hostile pattern/string pair could otherwise pin a core.
const DefaultRegexTimeout = 100 * time.Millisecond

// ecmaRegexp adapts regexp2 (ECMAScript mode) to jsonschema.Regexp. JSON
// Schema says `pattern` is ECMA-262, which Go's RE2 is not (no lookaround,
// different \d, \w, \s); regexp2 with the ECMAScript option is. A match that
// times out counts as "no match", so the value is rejected rather than let
// through unchecked.
type ecmaRegexp regexp2.Regexp

func (re *ecmaRegexp) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *ecmaRegexp) String() string { return (*regexp2.Regexp)(re).String() }

func ecmaEngine(timeout time.Duration) jsonschema.RegexpEngine {
	return func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		re.MatchTimeout = timeout
		return (*ecmaRegexp)(re), nil
	}
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
// returns every violation with its JSON pointer, or nil.
func (cs *compiledSchema) validate(v any) (fes []FieldError) {
	// Defence in depth: a validator bug must fail the call, not the process.
	defer func() {
		if p := recover(); p != nil {
			fes = []FieldError{{Pointer: "", Message: fmt.Sprintf("validator failed: %v", p)}}
		}
	}()
	err := cs.sch.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return []FieldError{{Pointer: "", Message: err.Error()}}
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
	return fes
}
