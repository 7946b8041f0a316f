package jsonptr

import (
	"slices"
	"testing"
)

func TestEscapeRoundTrip(t *testing.T) {
	for _, s := range []string{"", "a", "a/b", "~", "~1", "~0/~1/", "/~"} {
		e := Escape(s)
		if got := Unescape(e); got != s {
			t.Errorf("Unescape(Escape(%q)) = %q (escaped %q)", s, got, e)
		}
	}
	if got := Escape("a/b~c"); got != "a~1b~0c" {
		t.Errorf("Escape = %q, want a~1b~0c", got)
	}
	// RFC 6901 §4: "~01" is "~1", not "/".
	if got := Unescape("~01"); got != "~1" {
		t.Errorf("Unescape(~01) = %q, want ~1", got)
	}
}

func TestTokens(t *testing.T) {
	cases := []struct {
		ptr  string
		want []string
		ok   bool
	}{
		{"", nil, true},
		{"/", []string{""}, true},
		{"/a~1b/0/~0", []string{"a/b", "0", "~"}, true},
		{"a/b", nil, false},
	}
	for _, c := range cases {
		got, ok := Tokens(c.ptr)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q, %v; want %q, %v", c.ptr, got, ok, c.want, c.ok)
		}
	}
}

func TestResolve(t *testing.T) {
	doc := map[string]any{"a/b": []any{"x", map[string]any{"~": 7}}}
	child := func(n any, tok string) (any, bool) {
		switch c := n.(type) {
		case map[string]any:
			v, ok := c[tok]
			return v, ok
		case []any:
			i, ok := Index(tok, len(c))
			if !ok {
				return nil, false
			}
			return c[i], true
		}
		return nil, false
	}
	if v, ok := Resolve[any](doc, "/a~1b/1/~0", child); !ok || v != 7 {
		t.Errorf("Resolve = %v, %v; want 7, true", v, ok)
	}
	for _, bad := range []string{"/a~1b/2", "/a~1b/-1", "/a~1b/x", "/a/b", "a~1b", "/a~1b/0/z"} {
		if v, ok := Resolve[any](doc, bad, child); ok {
			t.Errorf("Resolve(%q) = %v, true; want false", bad, v)
		}
	}
	if v, ok := Resolve[any](doc, "", child); !ok || v == nil {
		t.Errorf("Resolve(\"\") should be the document")
	}
}
