package pipeline

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
)

// Patterns in re2Form's subset go to Go's linear-time regexp; everything
// whose meaning differs between the engines, or that RE2 cannot express,
// stays on regexp2.
func TestPatternEngineChoice(t *testing.T) {
	linear := []string{`^[a-z]+$`, `^\d{3}-\d{4}$`, `^[A-Za-z0-9_.+-]+@[a-z0-9-]+(?:\.[a-z]+)+$`,
		`^(foo|bar)*?baz$`, `^.{1,64}$`, `\.json$`, `^[^/]+(/[^/]+)*$`, `^\w+\/\W$`, `^[\]\-]$`, `^é+$`}
	backtracking := []string{`^(?=.*[A-Z]).{8,}$`, `(a)\1`, `\s`, `\bword\b`, `^\u0041$`, `[]`, `[^]`,
		`[[:alpha:]]`, `a{`, `x{,3}`, `a]`, `(?<n>a)`, `\p{L}`, `a**`, `^*`, `\x41`, `a{1001}`}
	eng := ecmaEngine(time.Second)
	for _, p := range linear {
		re, err := eng(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, ok := re.(*linearRegexp); !ok {
			t.Errorf("%s: on %T, want Go's regexp", p, re)
		}
		if re.String() != p {
			t.Errorf("%s: String() = %q, want the pattern as written", p, re.String())
		}
	}
	for _, p := range backtracking {
		re, err := eng(p)
		if err != nil {
			continue // not ECMA-262 at all: refused whatever the engine
		}
		if _, ok := re.(*ecmaRegexp); !ok {
			t.Errorf("%s: on %T, want regexp2", p, re)
		}
	}
}

// patternSubjects are strings built from the characters where ECMA-262 and
// RE2 differ (line terminators, non-ASCII letters and digits, Unicode
// spaces, astral runes) and the ones the patterns above use.
func patternSubjects(r *rand.Rand, n int) []string {
	alphabet := []string{"a", "b", "z", "A", "Z", "0", "9", "_", "-", ".", "/", "@", "]", "{", "}",
		"\n", "\r", "\t", "\v", " ", "\u00a0", "\u2028", "é", "١", "😀", "foo", "bar", "baz", "json"}
	out := []string{"", "abc\n", "\nabc", "foo.json", "a@b.co", "555-1234"}
	for range n {
		var b strings.Builder
		for range r.IntN(10) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}

// Every pattern the linear engine takes decides strings as regexp2 does,
// on the characters where the two regexp dialects differ.
func TestLinearPatternsAgreeWithRegexp2(t *testing.T) {
	pats := []string{`^[a-z]+$`, `^\d+$`, `^\D+$`, `^\w*$`, `^\W$`, `^.$`, `^.*$`, `a.b`, `^[^a]$`, `^[.]$`,
		`^[\d-]+$`, `^[\w.]+@\w+\.\w+$`, `^(foo|bar)+$`, `^(?:ab|a)*b?$`, `^.{2,3}$`, `$`, `^`, `a$|^b`,
		`^[\]\-{}]+$`, `\{\}`, `^[é-ü]+$`, `^\t\n\r\f\v$`, `[^\n]+`, `^(a|)+$`, `^.+?z$`}
	subjects := patternSubjects(rand.New(rand.NewPCG(1, 2)), 3000)
	eng := ecmaEngine(time.Second)
	for _, p := range pats {
		re, err := eng(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if _, ok := re.(*linearRegexp); !ok {
			t.Errorf("%s: not on the linear engine", p)
			continue
		}
		ref := regexp2.MustCompile(p, regexp2.ECMAScript)
		for _, s := range subjects {
			want, err := ref.MatchString(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := re.MatchString(s); got != want {
				t.Errorf("%s on %q: linear %v, regexp2 %v", p, s, got, want)
			}
		}
	}
}

// FuzzLinearPatterns: for any pattern the linear engine takes, it agrees
// with regexp2 on any string.
func FuzzLinearPatterns(f *testing.F) {
	for _, p := range []string{`^[a-z]+$`, `a.b`, `^(x|y){2,}?$`, `[^\d\W]`, `\.\*`} {
		f.Add(p, "a.b\nxyz")
	}
	eng := ecmaEngine(time.Second)
	f.Fuzz(func(t *testing.T, p, s string) {
		re, err := eng(p)
		if err != nil {
			return
		}
		lin, ok := re.(*linearRegexp)
		if !ok {
			return
		}
		ref := regexp2.MustCompile(p, regexp2.ECMAScript)
		ref.MatchTimeout = time.Second
		want, err := ref.MatchString(s)
		if err != nil {
			return
		}
		if got := lin.MatchString(s); got != want {
			t.Fatalf("%q on %q: linear %v, regexp2 %v", p, s, got, want)
		}
	})
}

// A pattern match that runs out of time is a timeout with its own message,
// never a schema verdict: the value was not judged.
func TestPatternTimeoutIsNotAVerdict(t *testing.T) {
	reg := NewRegistry(RegistryConfig{RegexTimeout: time.Millisecond})
	// The lookahead keeps it on regexp2; (a+)+ backtracks exponentially on
	// a run of a's that ends in a mismatch.
	tl := tool("catastrophic")
	tl.Parameters = objSchema(`{"s":{"type":"string","pattern":"^(?=a)(a+)+$"}}`)
	if err := reg.Register("p", tl, echo); err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	params, _ := json.Marshal(map[string]string{"s": strings.Repeat("a", 40) + "b"})
	res, err := m.Call(t.Context(), Request{Tool: "catastrophic", Params: params, Caller: "alice"})
	var pt *PatternTimeout
	if !errors.As(err, &pt) {
		t.Fatalf("want *PatternTimeout, got %T: %v", err, err)
	}
	if errors.Is(err, ErrSchemaValidationFailed) || !errors.Is(err, ErrTimeout) || KindOf(err) != KindTimeout {
		t.Fatalf("kind %s (%v): want timeout, not a schema verdict", KindOf(err), err)
	}
	if res.Outcome != OutcomeTimeout || pt.Tool != "catastrophic" || pt.Limit != time.Millisecond || pt.Length != 41 {
		t.Fatalf("outcome %s, %+v", res.Outcome, pt)
	}
	if msg := err.Error(); !strings.Contains(msg, "pattern match timed out") || strings.Contains(msg, "does not match") {
		t.Fatalf("message %q", msg)
	}
	if h := Hint(err); !strings.Contains(h, "shorter value") {
		t.Fatalf("hint %q", h)
	}
	// Validate (the selector's check) says the same.
	if err := m.Validate(tl, params); !errors.As(err, &pt) {
		t.Fatalf("Validate: %v", err)
	}
	// With time to decide (a 1 ms limit can run out on any value on a
	// loaded machine), the same pattern gives verdicts.
	roomy := NewRegistry(RegistryConfig{RegexTimeout: time.Minute})
	if err := roomy.Register("p", tl, echo); err != nil {
		t.Fatal(err)
	}
	m2, err := NewManager(Config{Registry: roomy})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	if _, err := m2.Call(t.Context(), Request{Tool: "catastrophic", Params: []byte(`{"s":"b"}`), Caller: "alice"}); !errors.Is(err, ErrSchemaValidationFailed) {
		t.Fatalf("a mismatch: %v", err)
	}
	if _, err := m2.Call(t.Context(), Request{Tool: "catastrophic", Params: []byte(`{"s":"aaa"}`), Caller: "alice"}); err != nil {
		t.Fatalf("a match: %v", err)
	}
}
