package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// capture records the params the handler saw.
type capture struct{ got json.RawMessage }

func (c *capture) Invoke(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
	c.got = append(json.RawMessage(nil), p...)
	return json.RawMessage(`{}`), nil
}

const coercionProps = `{"ratio":{"type":"number"},"count":{"type":"integer"},` +
	`"limit":{"type":"integer","default":10},"opts":{"type":"object","properties":{"mode":{"type":"string","default":"fast"}}}}`

func coercionEnv(t *testing.T, lenient bool) (*env, *capture) {
	e := newEnv(t, nil)
	tl := tool("c")
	tl.Parameters = objSchema(coercionProps)
	tl.Lenient = lenient
	h := &capture{}
	e.register(t, "p", tl, h)
	return e, h
}

// Rule 1: an integer where a number is expected is allowed, strict or not.
func TestCoercionIntegerToNumber(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		e, h := coercionEnv(t, lenient)
		if _, err := e.call("c", `{"ratio":3}`); err != nil {
			t.Fatalf("lenient=%v: %v", lenient, err)
		}
		if string(h.got) != `{"ratio":3}` {
			t.Fatalf("params changed: %s", h.got)
		}
	}
}

// Rule 2: a numeric string for a number or integer is rejected, even lenient.
func TestCoercionNumericStringRejected(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		e, _ := coercionEnv(t, lenient)
		for _, p := range []string{`{"ratio":"3.5"}`, `{"count":"42"}`} {
			_, err := e.call("c", p)
			var sv *SchemaValidationFailed
			if !errors.As(err, &sv) || sv.Errors[0].Pointer == "" {
				t.Fatalf("lenient=%v %s: %v", lenient, p, err)
			}
		}
	}
}

// Rule 3: null → the property's default when it declares one (lenient only);
// the handler sees the default. Nested object properties too.
func TestCoercionNullToDefault(t *testing.T) {
	e, h := coercionEnv(t, true)
	if _, err := e.call("c", `{"limit":null,"opts":{"mode":null}}`); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(h.got, &got)
	if got["limit"] != float64(10) || got["opts"].(map[string]any)["mode"] != "fast" {
		t.Fatalf("handler saw %s", h.got)
	}
	// null without a default stays null, and is rejected by the schema.
	if _, err := e.call("c", `{"count":null}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatalf("null without default: %v", err)
	}
	// strict: no substitution.
	s, _ := coercionEnv(t, false)
	if _, err := s.call("c", `{"limit":null}`); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatalf("strict null: %v", err)
	}
	// the default is copied, not shared: a second call sees it intact.
	if _, err := e.call("c", `{"opts":null}`); err == nil {
		t.Fatal("opts has no default: null must be rejected")
	}
}
