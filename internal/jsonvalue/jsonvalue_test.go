package jsonvalue

import (
	"encoding/json"
	"math/big"
	"reflect"
	"testing"
)

// The scanner for well-formed documents gives what the decoder path gives.
func TestParseScannerMatchesDecoder(t *testing.T) {
	docs := []string{
		`{"type":"object","properties":{"b":{"enum":[1,-2.5e3,"x\"y","\u00e9\ud83d\ude00",true,false,null]},"a":{}},"a":1,"a":2}`,
		" [ 1 ,\n\t{ \"k\" : [ ] } , \"\\\\/\" , 0.5E-2 ] ",
		`"caf` + "\xff" + `é"`, // invalid UTF-8: the decoder's replacement
		`{"":{"":{"":[[[]]]}}}`,
		`12`, `"plain ascii"`, `{}`,
	}
	for _, d := range docs {
		got, err := Parse([]byte(d))
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		want, err := parseDecoder([]byte(d))
		if err != nil {
			t.Fatalf("%q: decoder: %v", d, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: scanner %s, decoder %s", d, got, want)
		}
	}
	for _, bad := range []string{`{"a":}`, `[1,]`, `{"a":1}x`, ``, `"\x"`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x\"",{"b":null}],"a":true}`))
	f.Add([]byte(`"\ud800"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err1 := Parse(b)
		want, err2 := parseDecoder(b)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: scanner err %v, decoder err %v", b, err1, err2)
		}
		if err1 == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scanner %s, decoder %s", b, got, want)
		}
	})
}

// Compact output keeps key order and lexemes, and a duplicate key keeps
// its first place with its last value.
func TestCompactOrderAndLexemes(t *testing.T) {
	v, err := Parse([]byte(` {"z": 1.50, "a": [true, null, "\u0001\n<&>"], "z": 2E3, "m": {}} `))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.String(), `{"z":2E3,"a":[true,null,"\u0001\n<&>"],"m":{}}`; got != want {
		t.Errorf("compact %s, want %s", got, want)
	}
	// Inside encoding/json, the order stays and <, >, & are escaped as
	// encoding/json escapes its own strings.
	b, err := json.Marshal(map[string]any{"s": v})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"s":{"z":2E3,"a":[true,null,"\u0001\n\u003c\u0026\u003e"],"m":{}}}`; got != want {
		t.Errorf("json.Marshal %s, want %s", got, want)
	}
	if got := string(AppendString(nil, "a\"\\\b\f\t\x7f\xffé")); got != "\"a\\\"\\\\\\b\\f\\t\x7f\uFFFDé\"" {
		t.Errorf("AppendString %q", got)
	}
}

func TestEdits(t *testing.T) {
	o := NewObject("a", 1, "b", "x", "c", []string{"p"}, "d", nil, "e", big.NewInt(-7), "f", false, "g", []*Value{From(true)})
	if got, want := o.String(), `{"a":1,"b":"x","c":["p"],"d":null,"e":-7,"f":false,"g":[true]}`; got != want {
		t.Fatalf("NewObject %s, want %s", got, want)
	}
	c := o.Clone()
	c.Set("a", From("y"))
	c.Set("h", From(2))
	c.Delete("b")
	if got, want := c.String(), `{"a":"y","c":["p"],"d":null,"e":-7,"f":false,"g":[true],"h":2}`; got != want {
		t.Errorf("edited clone %s, want %s", got, want)
	}
	if got, want := o.String(), `{"a":1,"b":"x","c":["p"],"d":null,"e":-7,"f":false,"g":[true]}`; got != want {
		t.Errorf("original after editing its clone %s, want %s", got, want)
	}
	if !o.Has("d") || o.Get("d").Kind != Null || o.Has("zz") || o.Get("c").Get("x") != nil {
		t.Error("Get/Has")
	}
	if c, ok := o.Child("c"); !ok || c.Kind != Array {
		t.Error("Child of an object")
	}
	if p, ok := o.Get("c").Child("0"); !ok || p.Str != "p" {
		t.Error("Child of an array")
	}
	for _, bad := range []string{"1", "-1", "x", ""} {
		if _, ok := o.Get("c").Child(bad); ok {
			t.Errorf("Child(%q) of a one-item array", bad)
		}
	}
	if _, ok := o.Child("zz"); ok {
		t.Error("Child of a missing key")
	}
	if s, ok := o.Get("b").AsString(); !ok || s != "x" {
		t.Error("AsString")
	}
	if _, ok := o.Get("a").AsString(); ok || (*Value)(nil).Is(Null) {
		t.Error("AsString of a number, Is of nil")
	}
}

const schema = `{"properties":{"data":{"items":{"properties":{"measurement":{"description":"The type of measurement","type":"string"},"timestamp":{"description":"The timestamp of the measurement","format":"date-time","type":"string"},"value":{"description":"The value of the measurement","type":"number"}},"required":["measurement","value","timestamp"],"type":"object"},"type":"array"}},"required":["data"],"type":"object"}`

func BenchmarkParse(b *testing.B) {
	doc := []byte(schema)
	b.Run("scanner", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Parse(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoder", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := parseDecoder(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
