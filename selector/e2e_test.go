//go:build e2e

package selector_test

// End-to-end tests of the selector's parts against a real Ollama server
// running the tiny random-weight model of internal/tinymodel (scripts/e2e.sh
// exports OLLAMA_HOST and AIRS_E2E_MODEL; without OLLAMA_HOST the server
// tests skip). The plan-grammar test needs no server.

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
)

func e2eServer(t *testing.T) (*ollama.HTTP, string) {
	t.Helper()
	host := os.Getenv("OLLAMA_HOST")
	if host == "" {
		t.Skip("e2e: OLLAMA_HOST is not set; run `bash scripts/e2e.sh ./selector/` (make e2e), which starts Ollama with the tiny model")
	}
	model := os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	c, err := ollama.New(ollama.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return c, model
}

// countingClient counts the texts sent to /api/embed, independently of the
// index's own SyncStats.
type countingClient struct {
	ollama.Client
	mu     sync.Mutex
	inputs []string
}

func (c *countingClient) Embed(ctx context.Context, model string, in []string) ([][]float32, error) {
	c.mu.Lock()
	c.inputs = append(c.inputs, in...)
	c.mu.Unlock()
	return c.Client.Embed(ctx, model, in)
}

func (c *countingClient) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.inputs
	c.inputs = nil
	return out
}

func builtinEntries(t *testing.T) []selector.Entry {
	t.Helper()
	tools, err := builtin.Tools(builtin.Options{Spaces: map[string]string{"docs": t.TempDir(), "secret": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	var es []selector.Entry
	for _, e := range tools {
		es = append(es, selector.Entry{Provider: builtin.ProviderID, Tool: e.Tool})
	}
	return es
}

// TestOllamaEmbeddingsRoundTrip: the builtin tools' docs embedded by the
// real server into the index (persisted), searched, re-synced with one
// changed description (only that one is embedded again), and reopened from
// disk without embedding anything.
func TestOllamaEmbeddingsRoundTrip(t *testing.T) {
	c, model := e2eServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cc := &countingClient{Client: c}
	dir := t.TempDir()
	emb := embeddings.NewOllama(cc, model)
	ix, err := embeddings.Open(ctx, emb, embeddings.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	entries := builtinEntries(t)
	docs := selector.Docs(entries)
	n := len(docs)

	st, err := ix.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != n || st.Embedded != n || st.Changed != 0 || st.Removed != 0 {
		t.Errorf("first sync: %+v, want %d added and embedded", st, n)
	}
	if sent := cc.take(); len(sent) != n {
		t.Errorf("first sync sent %d texts to /api/embed, want %d", len(sent), n)
	}
	if emb.Dim() <= 0 || ix.Len() != n {
		t.Fatalf("dim %d, index length %d (want %d)", emb.Dim(), ix.Len(), n)
	}
	t.Logf("embedding dimension %d from %s", emb.Dim(), model)

	search := func(ix *embeddings.Index, q string) []embeddings.Hit {
		t.Helper()
		hits, err := ix.Search(ctx, q, 3, embeddings.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 {
			t.Fatalf("search %q: no hits", q)
		}
		ids := map[string]bool{}
		for _, d := range docs {
			ids[d.ID] = true
		}
		for _, h := range hits {
			if !ids[h.ID] {
				t.Errorf("search %q: hit %q is not an indexed tool", q, h.ID)
			}
			if math.IsNaN(h.Dense) || h.Dense < -1.5 || h.Dense > 1.5 {
				t.Errorf("search %q: hit %s has dense score %v", q, h.ID, h.Dense)
			}
		}
		return hits
	}
	hits := search(ix, "list the pdf files in my documents folder")
	t.Logf("hits: %+v", hits)
	// A filter applies before ranking: only the allowed IDs come back.
	fh, err := ix.Search(ctx, "list the pdf files", 3, embeddings.Filter{IDs: []string{"calculator"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(fh) != 1 || fh[0].ID != "calculator" {
		t.Errorf("filtered search: %+v, want only calculator", fh)
	}

	// The same docs again: nothing to embed.
	cc.take() // the queries above
	st, err = ix.Sync(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unchanged != n || st.Embedded != 0 {
		t.Errorf("unchanged sync: %+v", st)
	}
	if sent := cc.take(); len(sent) != 0 {
		t.Errorf("unchanged sync sent %d texts", len(sent))
	}

	// One changed description: exactly that one is embedded again.
	changed := make([]embeddings.Doc, n)
	copy(changed, docs)
	for i := range changed {
		if changed[i].ID == "summarize" {
			changed[i].Description = "Shorten a long text into a few sentences, keeping the main points."
		}
	}
	st, err = ix.Sync(ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Embedded != 1 || st.Unchanged != n-1 {
		t.Errorf("one changed description: %+v, want 1 changed and embedded", st)
	}
	sent := cc.take()
	if len(sent) != 1 || !strings.Contains(sent[0], "Shorten a long text") {
		t.Errorf("one changed description sent %d texts: %.200q", len(sent), sent)
	}
	if d, ok := ix.Doc("summarize"); !ok || !strings.HasPrefix(d.Description, "Shorten a long text") {
		t.Errorf("index holds summarize as %+v", d)
	}

	// Reopened from disk with a fresh embedder: the vectors are there.
	cc2 := &countingClient{Client: c}
	ix2, err := embeddings.Open(ctx, embeddings.NewOllama(cc2, model), embeddings.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	st, err = ix2.Sync(ctx, changed)
	if err != nil {
		t.Fatal(err)
	}
	if st.Embedded != 0 || st.Unchanged != n {
		t.Errorf("reopened index re-embedded: %+v", st)
	}
	if got := cc2.take(); len(got) != 0 {
		t.Errorf("reopened index sent %d texts to /api/embed on Sync", len(got))
	}
	if ix2.Len() != n {
		t.Errorf("reopened index has %d docs, want %d", ix2.Len(), n)
	}
	h2 := search(ix2, "list the pdf files in my documents folder")
	if h2[0].ID != hits[0].ID {
		// The query is embedded again by the same model: same top hit.
		t.Errorf("reopened index ranks %s first, the original %s", h2[0].ID, hits[0].ID)
	}
	for _, q := range cc2.take() { // only queries are embedded now
		if !strings.Contains(q, "list the pdf files") {
			t.Errorf("reopened index embedded %.100q, not a query", q)
		}
	}

	// The retriever the selector uses, over this index.
	r := &selector.IndexRetriever{Index: ix2}
	got, err := r.Retrieve(ctx, "read the notes file", 2, []string{"read-file", "calculator"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 || len(got) > 2 {
		t.Errorf("retriever: %+v", got)
	}
	for _, g := range got {
		if g.Name != "read-file" && g.Name != "calculator" {
			t.Errorf("retriever returned %s outside the allowed names", g.Name)
		}
	}
}

// TestPlanSchemaCompiles: the plan schema over every builtin tool compiles
// with the grammar package in well under a second's budget and exports for
// Ollama without loosening; a plan with references is accepted by the
// grammar, the exported schema and chains alike, and a malformed reference
// by none of the first two.
func TestPlanSchemaCompiles(t *testing.T) {
	entries := builtinEntries(t)
	schema, err := selector.PlanSchema(entries, 8)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g, err := grammar.Compile(schema, grammar.Options{Whitespace: grammar.WhitespaceFlexible, MaxWhitespace: 32, Lenient: true})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("grammar.Compile rejects the plan schema: %v", err)
	}
	t.Logf("plan grammar over %d tools compiled in %v", len(entries), took)
	if took > 20*time.Second {
		t.Errorf("compiling the plan grammar took %v", took)
	}
	format, loose, err := export.OllamaFormat(schema)
	if err != nil {
		t.Fatalf("export.OllamaFormat rejects the plan schema: %v", err)
	}
	if len(loose) > 0 {
		t.Errorf("export loosened the plan schema: %v", loose)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(format)))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("mem://format.json", doc); err != nil {
		t.Fatal(err)
	}
	fs, err := comp.Compile("mem://format.json")
	if err != nil {
		t.Fatalf("the exported format is not a valid schema: %v", err)
	}
	good := `{"steps": [
		{"id": "a", "function": "pdf-extract", "arguments": {"space": "docs", "path": "pricing-2024.pdf"}},
		{"id": "b", "function": "pdf-extract", "arguments": {"space": "docs", "path": "pricing-2025.pdf"}},
		{"id": "c", "function": "compare", "arguments": {"a": "{{steps.a.output.text}}", "b": "{{steps.b.output.text}}", "a_label": "2024"}},
		{"id": "d", "function": "list-files", "arguments": {"space": "{{input.space}}", "limit": "{{steps.c.output.files[0]}}"}}
	]}`
	if !g.Match([]byte(good)) {
		t.Errorf("the plan grammar rejects a valid plan")
	}
	var v any
	if err := json.Unmarshal([]byte(good), &v); err != nil {
		t.Fatal(err)
	}
	if err := fs.Validate(v); err != nil {
		t.Errorf("the exported format rejects a valid plan: %v", err)
	}
	if _, err := chains.ParsePlan([]byte(good)); err != nil {
		t.Errorf("chains.ParsePlan: %v", err)
	}
	for _, bad := range []string{
		`{"steps": [{"id": "a", "function": "list-files", "arguments": {"space": "{{steps.a.outputs}}"}}]}`,
		`{"steps": [{"id": "a", "function": "list-files", "arguments": {"space": "elsewhere"}}]}`,
		`{"steps": [{"id": "a", "function": "list-files", "arguments": {"space": "docs", "limit": "{{steps.x}}"}}]}`,
		`{"steps": [{"id": "a", "function": "rm-rf", "arguments": {}}]}`,
	} {
		if g.Match([]byte(bad)) {
			t.Errorf("the plan grammar accepts %s", bad)
		}
		var v any
		if err := json.Unmarshal([]byte(bad), &v); err != nil {
			t.Fatal(err)
		}
		if fs.Validate(v) == nil {
			t.Errorf("the exported format accepts %s", bad)
		}
	}
	// A reference as long as RefPattern allows still fits a plain string
	// parameter without the union (admitsRefs), e.g. a 200-byte label.
	long := "{{steps.s" + strings.Repeat("x", 31) + ".output" + strings.Repeat("."+strings.Repeat("k", 32), 4) + "}}"
	plan := `{"steps": [{"id": "a", "function": "compare", "arguments": {"a": "x", "b": "y", "a_label": "` + long + `"}}]}`
	if !g.Match([]byte(plan)) {
		t.Errorf("the plan grammar rejects the longest reference (%d bytes) in a_label", len(long))
	}
}
