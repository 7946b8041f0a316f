package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// fuzzSchema exercises the validator's main paths: types, nesting, arrays,
// ECMA-262 patterns, enums, bounds, defaults (lenient).
const fuzzSchema = `{"type":"object","properties":{
	"q":{"type":"string","pattern":"^(?=.*\\w)[^<>]{1,40}$"},
	"n":{"type":"integer","minimum":-5,"maximum":1000,"default":3},
	"r":{"type":"number","exclusiveMinimum":0},
	"mode":{"enum":["a","b",null]},
	"tags":{"type":"array","items":{"type":"string","maxLength":8},"uniqueItems":true},
	"sub":{"type":"object","properties":{"x":{"type":"boolean","default":false}},"additionalProperties":false}
},"required":["q"]}`

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{
		`{"q":"hello"}`, `{"q":"hi","n":5,"r":0.5,"mode":"a","tags":["x","y"],"sub":{"x":true}}`,
		`{"q":"<b>","n":"5"}`, `{"q":null,"n":null,"sub":{"x":null}}`, `{}`, `[]`, `null`, `1e999`,
		`{"q":"a","tags":["x","x"]}`, `{"q":"\u0000"}`, `{"a":1}{"b":2}`, "{\"q\":\"\xff\"}", ``, `{"q":"a","n":1.0}`,
		`{"q":"a","n":123456789012345678901234567890}`, `{"sub":{"y":1},"q":"zz"}`, `{"q":"a","r":1e99999999}`, `{"q":"a","r":-1e-99999999}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecodeJSONParams: stage 1 never panics, and what it accepts is one
// valid JSON value that the validator can judge.
func FuzzDecodeJSONParams(f *testing.F) {
	fuzzSeeds(f)
	cs, err := newSchemaCache(0).compile(json.RawMessage(fuzzSchema))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeParams("t", b, JSON)
		if err != nil {
			return
		}
		if !json.Valid(p.json) {
			t.Fatalf("accepted invalid JSON %q", b)
		}
		fes, _ := cs.validate(p.value)
		for _, fe := range fes {
			if fe.Pointer != "" && !strings.HasPrefix(fe.Pointer, "/") || fe.Message == "" {
				t.Fatalf("bad field error %+v", fe)
			}
		}
	})
}

// FuzzDecodeMsgPackParams: MessagePack input never panics, and whatever is
// accepted comes out as valid JSON that decodes again.
func FuzzDecodeMsgPackParams(f *testing.F) {
	for _, v := range []any{
		map[string]any{"q": "hi", "n": 3}, map[string]any{"tags": []any{"a", int8(-1), 2.5, nil, true}},
		map[string]any{"bin": []byte{0, 1, 2}}, []any{}, "s", map[string]any{"deep": map[string]any{"x": map[string]any{}}},
	} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Add([]byte{0xc1})                               // never-used code
	f.Add([]byte{0x81, 0x01})                         // map with int key, truncated
	f.Add([]byte{0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}) // NaN
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		p, err := decodeParams("t", b, MsgPack)
		if err != nil {
			return
		}
		if !json.Valid(p.json) {
			t.Fatalf("msgpack %x became invalid JSON %q", b, p.json)
		}
		if _, err := decodeJSON(p.json); err != nil {
			t.Fatalf("re-decoding %q: %v", p.json, err)
		}
	})
}

// FuzzCallValidation runs params through the whole pipeline on a lenient
// tool: one outcome per call, never a panic, and a handler only ever sees
// params that satisfy the schema.
func FuzzCallValidation(f *testing.F) {
	fuzzSeeds(f)
	reg := NewRegistry(RegistryConfig{})
	cs, _ := reg.schemas.compile(json.RawMessage(fuzzSchema))
	tl := Tool{Name: "f", Version: "1", Parameters: json.RawMessage(fuzzSchema), Lenient: true, Trust: TL3, LatencyClass: Fast}
	bad := ""
	reg.Register("p", tl, HandlerFunc(func(_ context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
		v, err := decodeJSON(p)
		if fes, timedOut := cs.validate(v); err != nil || fes != nil || timedOut != nil {
			bad = string(p)
		}
		return json.RawMessage(`{}`), nil
	}))
	m, _ := NewManager(Config{Registry: reg, Breaker: BreakerConfig{Failures: -1}})
	defer m.Close()
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := m.Call(context.Background(), Request{Tool: "f", Params: b, Caller: "fuzz"})
		if res == nil || (err == nil) != (res.Outcome == OutcomeOK) {
			t.Fatalf("%q: result %+v, err %v", b, res, err)
		}
		if bad != "" {
			t.Fatalf("handler saw params that break the schema: %s (from %q)", bad, b)
		}
	})
}
