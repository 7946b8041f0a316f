package everyday

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSame: a plan is right when its steps, tools, arguments and foreach
// are the expected ones; a calculator expression by its value; choices in
// any order; an error by its kind.
func TestSame(t *testing.T) {
	calc := func(e string) Outcome {
		return Outcome{Steps: []Step{{Tool: "calculator", Args: map[string]any{"expression": e}}}}
	}
	if !Same(calc("12 + 30"), calc("(12 + 30)")) || !Same(calc("42"), calc("6 * 7")) {
		t.Error("equal expressions judged different")
	}
	if Same(calc("42"), calc("41")) || Same(calc("42"), calc("documents")) {
		t.Error("a different or unparseable expression judged right")
	}
	read := func(p string, extra ...string) Outcome {
		a := map[string]any{"space": "documents", "path": p}
		for _, k := range extra {
			a[k] = true
		}
		return Outcome{Steps: []Step{{Tool: "read-file", Args: a}}}
	}
	if !Same(read("a.txt"), read("a.txt")) || Same(read("a.txt"), read("b.txt")) || Same(read("a.txt"), read("a.txt", "recursive")) {
		t.Error("arguments compared wrongly")
	}
	if !Same(Outcome{Choices: []string{"d:a", "d:b"}}, Outcome{Choices: []string{"d:b", "d:a"}}) || Same(Outcome{Choices: []string{"d:a"}}, Outcome{}) {
		t.Error("choices compared wrongly")
	}
	if !Same(Outcome{Error: ErrNotFound}, Outcome{Error: ErrNotFound}) || Same(Outcome{Error: ErrNotFound}, read("a.txt")) || Same(Outcome{}, read("a.txt")) {
		t.Error("errors or none compared wrongly")
	}
}

// TestRunCountsDestructiveUnasked: a destructive step in a plan for a
// request whose expected plan has none is counted.
func TestRunCountsDestructiveUnasked(t *testing.T) {
	cases := []Case{{Kind: "read", Q: "what does a.txt say", Steps: []Step{{Tool: "read-file", Args: map[string]any{"path": "a.txt"}}}},
		{Kind: "delete", Q: "delete a.txt", Steps: []Step{{Tool: "delete-file", Args: map[string]any{"path": "a.txt"}}}}}
	del := Outcome{Steps: []Step{{Tool: "delete-file", Args: map[string]any{"path": "a.txt"}, Destructive: true}}}
	r, err := Run(context.Background(), cases, func(context.Context, string) (Outcome, error) { return del, nil })
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 2 || r.Right != 1 || r.DestructiveUnasked != 1 || len(r.Misses) != 1 || r.Kinds["delete"].Right != 1 {
		t.Errorf("report %+v", r)
	}
}

// TestCommittedSuitesLoad: the suites parse, every case is of a known
// shape, and the held-out set shares no request with the development set.
func TestCommittedSuitesLoad(t *testing.T) {
	dev, err := Load(filepath.Join("testdata", "dev.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := Load(filepath.Join("testdata", "heldout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dev) < 300 || len(held) < 50 {
		t.Errorf("%d development and %d held-out requests", len(dev), len(held))
	}
	seen := map[string]bool{}
	for _, c := range dev {
		seen[c.Q] = true
	}
	for _, c := range held {
		if seen[c.Q] {
			t.Errorf("held-out request %q is also in the development set", c.Q)
		}
	}
	if _, err := Tools(filepath.Join("testdata", "tools.json")); err != nil {
		t.Error(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"q":"x","stpes":[]}`+"\n"), 0o644)
	if _, err := Load(bad); err == nil {
		t.Error("a misspelt field was accepted")
	}
}
