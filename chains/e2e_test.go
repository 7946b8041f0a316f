package chains

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// writePDF writes a real PDF (fpdf, compressed streams) with one line of
// text per entry, one page per slice.
func writePDF(t *testing.T, path string, pages ...[]string) {
	t.Helper()
	doc := fpdf.New("P", "mm", "A4", "")
	for _, lines := range pages {
		doc.AddPage()
		doc.SetFont("Helvetica", "", 11)
		for _, l := range lines {
			doc.CellFormat(0, 7, l, "", 1, "L", false, 0, "")
		}
	}
	var buf bytes.Buffer
	if err := doc.Output(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// builtinManager serves the builtin tools over a space "documents" at dir
// through a real Manager; alice may read the space, bob may not.
func builtinManager(t *testing.T, dir string) Options {
	t.Helper()
	policy := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {builtin.ProviderID}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: builtin.KindReadSpace, Arg: "documents"}}},
	}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"documents": dir}, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return Options{Executor: m, Catalog: RegistryCatalog{Registry: reg, Policy: policy}, Caller: "alice", MaxParallel: 8}
}

func parseExample(t *testing.T, name string) *Chain {
	t.Helper()
	file := filepath.Join("examples", name)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Both examples validate against the real builtin tools: tool names,
// parameter names and types, and the paths into their return schemas.
func TestExamplesValidateAgainstBuiltins(t *testing.T) {
	o := builtinManager(t, t.TempDir())
	for _, f := range []string{"summarize-papers.yaml", "compare-pricing.yaml"} {
		if err := parseExample(t, f).Validate(o.Catalog, "alice"); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

var papers = map[string][][]string{
	"attention.pdf": {{
		"Attention Is All You Need, revisited.",
		"We study transformer models built only from attention layers.",
		"Self-attention relates every token of a sequence to every other token.",
		"Our transformer reaches a new state of the art in machine translation.",
		"Training the transformer takes a fraction of the time recurrent networks need.",
	}},
	"graphs.pdf": {{
		"Message passing on molecular graphs.",
		"Graph neural networks exchange messages between neighbouring atoms.",
		"Each molecule is a graph whose nodes are atoms and whose edges are bonds.",
	}, {
		"Message passing predicts quantum properties of molecules accurately.",
		"The graph networks generalise to molecules larger than those seen in training.",
	}},
	"folding.pdf": {{
		"Protein structure prediction with deep learning.",
		"Proteins fold into three dimensional structures determined by their sequence.",
		"Our model predicts protein structures with atomic accuracy.",
		"Predicted protein structures help biologists design new experiments.",
	}},
}

func TestSummarizePapersEndToEnd(t *testing.T) {
	dir := t.TempDir()
	for name, pages := range papers {
		writePDF(t, filepath.Join(dir, name), pages...)
	}
	// Not PDFs, or not at the top: not listed.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("transformer notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	writePDF(t, filepath.Join(dir, "old", "draft.pdf"), []string{"An old draft."})

	o := builtinManager(t, dir)
	c := parseExample(t, "summarize-papers.yaml")
	res, err := Run(context.Background(), c, map[string]any{"max_words": 30}, o)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Papers    []string `json:"papers"`
		Summaries []string `json:"summaries"`
		Overview  string   `json:"overview"`
		Method    string   `json:"method"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("%s: %v", res.Output, err)
	}
	got := slices.Sorted(slices.Values(out.Papers))
	if !slices.Equal(got, []string{"attention.pdf", "folding.pdf", "graphs.pdf"}) {
		t.Fatalf("papers %v", out.Papers)
	}
	// Each summary, in the papers' order, is about its own paper.
	topic := map[string]string{"attention.pdf": "transformer", "graphs.pdf": "graph", "folding.pdf": "protein"}
	for i, p := range out.Papers {
		s := strings.ToLower(out.Summaries[i])
		if !strings.Contains(s, topic[p]) {
			t.Errorf("summary of %s does not mention %q: %q", p, topic[p], out.Summaries[i])
		}
		for q, other := range topic {
			if q != p && strings.Contains(s, other) {
				t.Errorf("summary of %s mentions %q (from %s): %q", p, other, q, out.Summaries[i])
			}
		}
		if n := len(strings.Fields(s)); n > 30 || n == 0 {
			t.Errorf("summary of %s has %d words (max_words 30)", p, n)
		}
	}
	// The overview draws on the summaries.
	ov := strings.ToLower(out.Overview)
	n := 0
	for _, w := range topic {
		if strings.Contains(ov, w) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("overview mentions %d of the 3 topics: %q", n, out.Overview)
	}
	if out.Method != "extractive" {
		t.Errorf("method %q without a model", out.Method)
	}
	// One pdf-extract and one summarize per paper, plus the overview.
	calls := map[string]int{}
	for _, n := range res.Trace {
		if n.CallID != "" {
			calls[n.Tool]++
		}
	}
	if calls["list-files"] != 1 || calls["pdf-extract"] != 3 || calls["summarize"] != 4 {
		t.Errorf("calls %v", calls)
	}

	// bob may not read the space: the chain is valid for him (the space is
	// an argument), and its first call is refused.
	o.Caller = "bob"
	res, err = Run(context.Background(), c, nil, o)
	var se *StepError
	if !errors.As(err, &se) || se.Step != "list" || !errors.Is(err, pipeline.ErrToolCapabilityDenied) {
		t.Errorf("bob: %v", err)
	}
	if res != nil && len(res.Outputs()) != 0 {
		t.Errorf("bob got outputs %v", res.Outputs())
	}
}

func TestComparePricingEndToEnd(t *testing.T) {
	dir := t.TempDir()
	writePDF(t, filepath.Join(dir, "quotes", "acme-2024.pdf"),
		[]string{"Acme Cloud - Price list 2024", "Basic plan: $10.00 per month", "Pro plan: $25.00 per month"},
		[]string{"Enterprise plan: $1,200 per year", "Support: included"})
	writePDF(t, filepath.Join(dir, "quotes", "acme-2025.pdf"),
		[]string{"Acme Cloud - Price list 2025", "Basic plan: $12.00 per month", "Pro plan: $25.00 per month"},
		[]string{"Enterprise plan: $1,500 per year", "Support: included"})
	o := builtinManager(t, dir)
	c := parseExample(t, "compare-pricing.yaml")
	res, err := Run(context.Background(), c, map[string]any{"a": "quotes/acme-2024.pdf", "b": "quotes/acme-2025.pdf"}, o)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Summary   string `json:"summary"`
		Identical bool   `json:"identical"`
		Prices    []struct {
			Label string `json:"label"`
			A     string `json:"a"`
			B     string `json:"b"`
		} `json:"prices"`
	}
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatalf("%s: %v", res.Output, err)
	}
	if out.Identical || out.Summary == "" {
		t.Errorf("summary %q identical %v", out.Summary, out.Identical)
	}
	changed := map[string]string{}
	for _, p := range out.Prices {
		changed[p.A] = p.B
		if strings.Contains(p.A, "25.00") {
			t.Errorf("the unchanged Pro price is reported: %+v", p)
		}
	}
	if changed["$10.00"] != "$12.00" || changed["$1,200"] != "$1,500" {
		t.Errorf("price changes %+v, want $10.00→$12.00 and $1,200→$1,500", out.Prices)
	}
	// The two extractions depend on nothing, so the scheduler starts both
	// at once (TestParallelSteps measures that); compare waits for both.
	g, err := c.structure()
	if err != nil {
		t.Fatal(err)
	}
	if len(g.deps[0]) != 0 || len(g.deps[1]) != 0 || !slices.Equal(g.deps[2], []int{0, 1}) {
		t.Errorf("deps %v", g.deps)
	}
}
