package export

import "testing"

func TestFoldPatternLengths(t *testing.T) {
	cases := []struct{ in, want string }{
		// the plan schemas' free string: class kept as written
		{`{"type":"string","pattern":"^[^{]*$","minLength":2,"maxLength":9}`,
			`{"type":"string","pattern":"^[^{]{2,9}$"}`},
		// any repeated class: written from its ranges, nested anywhere
		{`{"items":[{"type":"string","maxLength":3,"pattern":"^[b-da]*$","title":"t"}]}`,
			`{"items":[{"type":"string","pattern":"^[a-d]{0,3}$","title":"t"}]}`},
		// left alone: no maxLength, a + repetition, not a string, not one class
		{`{"type":"string","pattern":"^[a-z]*$"}`, `{"type":"string","pattern":"^[a-z]*$"}`},
		{`{"type":"string","pattern":"^[a-z]+$","maxLength":4}`, `{"type":"string","pattern":"^[a-z]+$","maxLength":4}`},
		{`{"type":["string"],"pattern":"^[a-z]*$","maxLength":4}`, `{"type":["string"],"pattern":"^[a-z]*$","maxLength":4}`},
		{`{"type":"string","pattern":"^a[a-z]*$","maxLength":4}`, `{"type":"string","pattern":"^a[a-z]*$","maxLength":4}`},
		// a non-integral bound is no bound
		{`{"type":"string","pattern":"^[a-z]*$","maxLength":4.5}`, `{"type":"string","pattern":"^[a-z]*$","maxLength":4.5}`},
	}
	for _, c := range cases {
		got, err := FoldPatternLengths([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("FoldPatternLengths(%s)\n got %s, %v\nwant %s", c.in, got, err, c.want)
		}
	}
	if _, err := FoldPatternLengths([]byte(`{"a":`)); err == nil {
		t.Error("malformed JSON: no error")
	}
}

func TestClassWithout(t *testing.T) {
	ranges, lo, hi, ok := RepeatedClass(`^[a-z{]{1,5}$`)
	if !ok || lo != 1 || hi != 5 {
		t.Fatalf("RepeatedClass = %v %d %d %v", ranges, lo, hi, ok)
	}
	if got := ClassWithout(ranges, '{'); got != "[a-z]" {
		t.Errorf("ClassWithout = %q, want [a-z]", got)
	}
	if got := ClassWithout([]rune{'{', '{'}, '{'); got != "" {
		t.Errorf("ClassWithout of only { = %q, want empty", got)
	}
	if got := ClassWithout([]rune{0, 0x7f, '-', '-'}, -1); got != `[\x00-\x7F\-]` {
		t.Errorf("escapes: %q", got)
	}
}
