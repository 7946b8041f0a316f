package grammar

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// TestToolCallRootLanguage checks the directly built root DFA against the
// language it stands for: every name (sharing prefixes, needing escapes,
// non-ASCII) with gaps of 0..MaxWhitespace whitespace bytes between tokens
// is accepted; a longer gap, a name's prefix or extension, another
// spelling, and "none" without AllowNone are rejected.
func TestToolCallRootLanguage(t *testing.T) {
	names := []string{"get", "get_weather", "get_weather2", "g", "météo", `a"b`, `back\slash`, "zzz", "get_w"}
	var tools []ToolSchema
	for _, n := range names {
		tools = append(tools, ToolSchema{Name: n, Parameters: []byte(`{"type":"object","properties":{"k":{"const":"` + strings.ReplaceAll(strings.ReplaceAll(n, `\`, `\\`), `"`, `\"`) + `"}},"required":["k"],"additionalProperties":false}`)})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, flex := range []bool{false, true} {
		for _, none := range []bool{false, true} {
			o := Options{}
			maxWS := 0
			if flex {
				o.Whitespace, o.MaxWhitespace = WhitespaceFlexible, 3
				maxWS = 3
			}
			g, err := ToolCall(tools, ToolCallOptions{AllowNone: none, Options: o})
			if err != nil {
				t.Fatal(err)
			}
			// call writes a call with gaps from gap(i) at the 8 gap places
			call := func(name, args string, gap func(i int) string) string {
				toks := []string{"{", `"function"`, ":", string(jsonvalue.AppendString(nil, name)), ",", `"arguments"`, ":", args, "}"}
				var b strings.Builder
				for i, tk := range toks {
					b.WriteString(tk)
					if i < len(toks)-1 && i != 6 { // the arguments' own grammar has no leading gap
						b.WriteString(gap(i))
					}
				}
				return b.String()
			}
			randGap := func(int) string {
				n := rng.IntN(maxWS + 1)
				var b []byte
				for range n {
					b = append(b, " \t\n\r"[rng.IntN(4)])
				}
				return string(b)
			}
			argsOf := func(name string) string {
				return `{"k":` + string(jsonvalue.AppendString(nil, name)) + `}`
			}
			for _, n := range names {
				for range 5 {
					if s := call(n, argsOf(n), randGap); !g.Match([]byte(s)) {
						t.Errorf("flex=%v none=%v: should accept %q", flex, none, s)
					}
				}
				for place := range 8 {
					if place == 6 {
						continue
					}
					long := func(i int) string {
						if i == place {
							return strings.Repeat(" ", maxWS+1)
						}
						return ""
					}
					if s := call(n, argsOf(n), long); g.Match([]byte(s)) {
						t.Errorf("flex=%v none=%v: should reject a gap of %d: %q", flex, none, maxWS+1, s)
					}
				}
				noGap := func(int) string { return "" }
				for _, m := range []string{n[:len(n)-1], n + "x", strings.ToUpper(n)} {
					if m == n || containsName(names, m) {
						continue
					}
					if s := call(m, argsOf(n), noGap); g.Match([]byte(s)) {
						t.Errorf("flex=%v none=%v: should reject name %q", flex, none, m)
					}
				}
				// another tool's arguments after this tool's name
				other := names[(indexName(names, n)+1)%len(names)]
				if s := call(n, argsOf(other), noGap); g.Match([]byte(s)) {
					t.Errorf("flex=%v none=%v: should reject %q", flex, none, s)
				}
			}
			for _, args := range []string{"{}", "{" + strings.Repeat(" ", maxWS) + "}"} {
				s := call(NoneTool, args, randGap)
				if g.Match([]byte(s)) != none {
					t.Errorf("flex=%v none=%v: %q accepted=%v", flex, none, s, !none)
				}
			}
			if g.Match([]byte(call(NoneTool, `{"x":1}`, func(int) string { return "" }))) {
				t.Errorf("none with arguments accepted")
			}
		}
	}
}

func containsName(names []string, s string) bool { return indexName(names, s) >= 0 }

func indexName(names []string, s string) int {
	for i, n := range names {
		if n == s {
			return i
		}
	}
	return -1
}

// TestToolCallLazy: a tool's automata are built when a matcher first
// completes its name, once for every grammar and goroutine that shares the
// tool, and not before.
func TestToolCallLazy(t *testing.T) {
	toolCache.Clear()
	mk := func(name, prop string) ToolSchema {
		return ToolSchema{Name: name, Parameters: []byte(`{"type":"object","properties":{"` + prop + `":{"type":"integer","minimum":3}},"required":["` + prop + `"]}`)}
	}
	tools := []ToolSchema{mk("alpha", "lazy_a"), mk("beta", "lazy_b"), mk("gamma", "lazy_c")}
	g, err := ToolCall(tools, ToolCallOptions{AllowNone: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range g.subs {
		if s.built.Load() {
			t.Fatalf("tool %d built before use", i)
		}
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			m := g.NewMatcher()
			ok := `{"function":"beta","arguments":{"lazy_b":4}}`
			if i%2 == 1 {
				ok = `{"function":"none","arguments":{}}`
			}
			if _, good := m.AdvanceBytes([]byte(ok)); !good || !m.IsAccepting() {
				t.Errorf("rejected %s", ok)
			}
		})
	}
	wg.Wait()
	if g.subs[0].built.Load() || !g.subs[1].built.Load() || g.subs[2].built.Load() {
		t.Fatalf("built: %v %v %v, want only beta", g.subs[0].built.Load(), g.subs[1].built.Load(), g.subs[2].built.Load())
	}
	if g.Match([]byte(`{"function":"beta","arguments":{"lazy_b":2}}`)) {
		t.Error("minimum not enforced")
	}
	// a second grammar over the same tools shares the built automaton
	g2, err := ToolCall(tools[1:], ToolCallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g2.subs[0] != g.subs[1] {
		t.Error("tool grammar not shared through the cache")
	}
	// Eager builds all, and Stats/Automaton see every tool
	g3, err := ToolCall(tools, ToolCallOptions{Eager: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range g3.subs {
		if !s.built.Load() {
			t.Errorf("eager: tool %d not built", i)
		}
	}
	a := g3.Automaton()
	if len(a.Rules) != g3.Stats().Rules || len(a.Rules) < 4 {
		t.Errorf("automaton %d rules, stats %v", len(a.Rules), g3.Stats())
	}
	for ri, r := range a.Rules {
		for _, s := range r.States {
			for _, c := range s.Calls {
				if c.Rule < 0 || c.Rule >= len(a.Rules) || c.Return >= len(r.States) {
					t.Fatalf("rule %d: call %+v out of range", ri, c)
				}
			}
		}
	}
}

// TestToolCallLazyBuildError: lowering cannot see a size budget; a tool
// whose automaton exceeds it fails when first reached: its name leads to a
// dead end (no token, no completion), the other tools work, and Build and
// Eager report the error with the tool's name.
func TestToolCallLazyBuildError(t *testing.T) {
	toolCache.Clear()
	ruleCacheMu.Lock()
	clear(ruleCache)
	ruleCacheMu.Unlock()
	small := ToolSchema{Name: "small", Parameters: []byte(`{"enum":[{}]}`)}
	if _, err := ToolCall([]ToolSchema{small}, ToolCallOptions{Eager: true}); err != nil {
		t.Fatal(err) // the shared any-value rules, built under the normal budget
	}
	old := maxRuleStates
	maxRuleStates = 40
	defer func() { maxRuleStates = old }()
	big := ToolSchema{Name: "big", Parameters: []byte(`{"type":"object","properties":{"p1":{"type":"string","pattern":"^a+$"},"p2":{"type":"string","pattern":"^b+$"},"p3":{"type":"string","pattern":"^c+$"},"p4":{"type":"string","pattern":"^d+$"},"p5":{"type":"string","pattern":"^e+$"},"p6":{"type":"string","pattern":"^f+$"},"p7":{"type":"string","pattern":"^g+$"},"p8":{"type":"string","pattern":"^h+$"}},"additionalProperties":false}`)}
	g, err := ToolCall([]ToolSchema{big, small}, ToolCallOptions{})
	if err != nil {
		t.Fatalf("lowering failed: %v", err)
	}
	m := g.NewMatcher()
	if _, ok := m.AdvanceBytes([]byte(`{"function":"big","arguments":`)); !ok {
		t.Fatal("name rejected before the build")
	}
	if m.CanContinue() || m.IsAccepting() {
		t.Error("a tool that failed to build must be a dead end")
	}
	if !g.Match([]byte(`{"function":"small","arguments":{}}`)) {
		t.Error("the other tool must still work")
	}
	err = g.Build()
	if err == nil || !strings.Contains(err.Error(), `tool "big"`) || !strings.Contains(err.Error(), "too large") {
		t.Errorf("Build: %v", err)
	}
	toolCache.Clear()
	if _, err := ToolCall([]ToolSchema{big, small}, ToolCallOptions{Eager: true}); err == nil || !strings.Contains(err.Error(), `tool "big"`) {
		t.Errorf("Eager: %v", err)
	}
	toolCache.Clear()
}
