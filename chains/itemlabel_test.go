package chains

import (
	"context"
	"encoding/json"
	"sort"
	"sync"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// labelExec records, per call, the foreach element's label its context
// carries.
type labelExec struct {
	*testExec
	mu     sync.Mutex
	labels map[string]string // tool → labels seen, in any order
	seen   []string
}

func (x *labelExec) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	x.mu.Lock()
	x.seen = append(x.seen, req.Tool+":"+ItemLabel(ctx))
	x.mu.Unlock()
	return x.testExec.Call(ctx, req)
}

// TestForeachCallsCarryTheirElementsLabel: each call of a foreach step
// gets in its context what names its element (a path, a short string);
// a plain step's call gets none.
func TestForeachCallsCarryTheirElementsLabel(t *testing.T) {
	x := newTestExec()
	x.add(pipeline.Tool{Name: "list"}, func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"files":[{"path":"a/one.txt","size":1},{"path":"b/two.txt","size":2}],"words":["alpha","beta"]}`), nil
	})
	x.add(pipeline.Tool{Name: "echo"}, func(_ context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	c, err := Parse("labels.yaml", []byte(`
pipeline: labels
steps:
  - id: list
    tool: list
    params: {}
  - id: each
    tool: echo
    foreach: "{{steps.list.output.files}}"
    params: {p: "{{item.path}}"}
  - id: words
    tool: echo
    foreach: "{{steps.list.output.words}}"
    params: {w: "{{item}}"}
`))
	if err != nil {
		t.Fatal(err)
	}
	lx := &labelExec{testExec: x}
	o := opts(x)
	o.Executor = lx
	if _, err := Run(context.Background(), c, nil, o); err != nil {
		t.Fatal(err)
	}
	sort.Strings(lx.seen)
	want := []string{"echo:a/one.txt", "echo:alpha", "echo:b/two.txt", "echo:beta", "list:"}
	if len(lx.seen) != len(want) {
		t.Fatalf("calls %v, want %v", lx.seen, want)
	}
	for i := range want {
		if lx.seen[i] != want[i] {
			t.Fatalf("calls %v, want %v", lx.seen, want)
		}
	}
}

func TestLabelOf(t *testing.T) {
	for _, c := range []struct {
		item any
		want string
	}{
		{map[string]any{"path": "x.pdf", "name": "X"}, "x.pdf"},
		{map[string]any{"name": "Alice"}, "Alice"},
		{map[string]any{"text": "a long text"}, ""},
		{"short", "short"},
		{"two\nlines", ""},
		{3.0, ""},
	} {
		if got := labelOf(c.item); got != c.want {
			t.Errorf("labelOf(%v) = %q, want %q", c.item, got, c.want)
		}
	}
}
