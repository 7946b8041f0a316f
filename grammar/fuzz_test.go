package grammar

import (
	"encoding/json"
	"fmt"
	"testing"
)

// FuzzCompile: arbitrary schema bytes never panic; whatever compiles
// accepts only instances the reference validator accepts (checked on a few
// generated candidates).
func FuzzCompile(f *testing.F) {
	for _, kc := range keywordCases {
		f.Add([]byte(kc.schema))
	}
	f.Add([]byte(`{"type":"string","pattern":"^(a|b)*c{2,3}$"}`))
	f.Add([]byte(`{"$ref":"#"}`))
	f.Add([]byte(`{"type":"number","minimum":1e400}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		g, err := Compile(schema, Options{})
		if err != nil {
			return
		}
		var probe any
		if json.Unmarshal(schema, &probe) != nil {
			return
		}
		m := g.NewMatcher()
		out := m.Forced()
		if len(out) > 0 && m.g.Match(out) {
			val := newValidatorOrNil(schema)
			if val != nil && !val.valid(out) {
				t.Errorf("forced sentence %q accepted but invalid", out)
			}
		}
	})
}

// FuzzMatcher: random bytes never panic; anything accepted as complete
// validates.
func FuzzMatcher(f *testing.F) {
	schemas := []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":-5,"maximum":5},"b":{"type":"string","pattern":"^x+$"}},"required":["a"]}`,
		`{"type":"array","items":{"anyOf":[{"type":"number","multipleOf":0.5},{"type":"boolean"}]},"maxItems":3}`,
		`{"type":"string","format":"date-time"}`,
	}
	gs := make([]*Grammar, len(schemas))
	for i, s := range schemas {
		g, err := Compile([]byte(s), Options{})
		if err != nil {
			f.Fatal(err)
		}
		gs[i] = g
	}
	f.Add(0, []byte(`{"a":1,"b":"xx"}`))
	f.Add(1, []byte(`[1.5,true]`))
	f.Add(2, []byte(`"2024-01-01T00:00:00Z"`))
	f.Add(0, []byte(`{"a":-5,"c":[{}]}`))
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		if which < 0 {
			which = -which
		}
		i := which % len(gs)
		g := gs[i]
		m := g.NewMatcher()
		n, _ := m.AdvanceBytes(data)
		m.Forced()
		if n == len(data) && m.IsAccepting() {
			val := newValidatorOrNil([]byte(schemas[i]))
			if !val.valid(data) {
				t.Errorf("schema %d accepted invalid %q", i, data)
			}
		}
		if n > 0 {
			m.Rollback(n)
			if m.Len() != 0 {
				t.Error("rollback")
			}
		}
	})
}

func newValidatorOrNil(schema []byte) *refValidator {
	v, _ := newValidatorErr(schema)
	return v
}

// newValidatorErr is newValidator with the reason it could not compile the
// schema instead of a test failure.
func newValidatorErr(schema []byte) (v *refValidator, why string) {
	defer func() {
		if r := recover(); r != nil {
			v, why = nil, fmt.Sprint(r)
		}
	}()
	tb := &panicTB{}
	return newValidator(tb, schema), ""
}

// panicTB turns Fatal into a panic with its message (for newValidator
// outside a test).
type panicTB struct{ testing.TB }

func (p *panicTB) Helper()                           {}
func (p *panicTB) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (p *panicTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
