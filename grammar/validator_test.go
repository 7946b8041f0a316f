package grammar

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The reference validator (tests only): santhosh-tekuri/jsonschema with
// format assertion and ECMA-262 regexes (dlclark/regexp2).

type ecmaRegexp regexp2.Regexp

func (re *ecmaRegexp) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}

func (re *ecmaRegexp) String() string { return (*regexp2.Regexp)(re).String() }

func ecmaCompile(s string) (jsonschema.Regexp, error) {
	re, err := regexp2.Compile(s, regexp2.ECMAScript)
	if err != nil {
		return nil, err
	}
	return (*ecmaRegexp)(re), nil
}

var schemaSeq atomic.Int64

type refValidator struct{ s *jsonschema.Schema }

func newValidator(t testing.TB, schema []byte) *refValidator {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseRegexpEngine(ecmaCompile)
	url := fmt.Sprintf("mem://s%d.json", schemaSeq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("validator cannot compile schema: %v", err)
	}
	return &refValidator{s}
}

func (v *refValidator) valid(instance []byte) bool {
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return false
	}
	return v.s.Validate(x) == nil
}
