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
	"github.com/airs-dev/airs/pipeline"
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

// TestPlanSchemaCompiles: the outline schema over every builtin tool and the
// plan schemas of the seed's two outlines compile with the grammar package
// and export for Ollama without loosening; a plan with references is
// accepted by the grammar, the exported format and chains alike, and plans
// with a malformed, forward or mistyped reference by neither of the first
// two.
func TestPlanSchemaCompiles(t *testing.T) {
	entries := builtinEntries(t)
	byName := map[string]pipeline.Tool{}
	var names []string
	for _, e := range entries {
		byName[e.Tool.Name] = e.Tool
		names = append(names, e.Tool.Name)
	}
	compile := func(schema []byte) (*grammar.Grammar, *jsonschema.Schema) {
		t.Helper()
		start := time.Now()
		g, err := grammar.Compile(schema, grammar.Options{Strict: true, Lenient: true})
		if err != nil {
			t.Fatalf("grammar.Compile rejects the schema: %v", err)
		}
		t.Logf("compiled in %v", time.Since(start))
		pf, err := selector.PlanFormat(schema)
		if err != nil {
			t.Fatal(err)
		}
		format, loose, err := export.OllamaFormat(pf)
		if err != nil {
			t.Fatalf("export.OllamaFormat: %v", err)
		}
		if len(loose) > 0 {
			t.Errorf("export loosened the schema: %v", loose)
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
		return g, fs
	}
	// The grammar is compact; the stream check takes the white space a
	// model may emit between tokens.
	matches := func(g *grammar.Grammar, doc string) bool {
		sc := selector.NewOutputChecker(g)
		_, err := sc.Write([]byte(doc))
		return err == nil && sc.Complete()
	}
	accepts := func(fs *jsonschema.Schema, doc string) bool {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		return fs.Validate(v) == nil
	}

	os, _, err := selector.OutlineSchema(names, selector.PlanLimits{})
	if err != nil {
		t.Fatal(err)
	}
	og, ofs := compile(os)
	if doc := `{"steps": ["list-files", "pdf-extract", "summarize"]}`; !matches(og, doc) || !accepts(ofs, doc) {
		t.Errorf("the outline grammar or format rejects %s", doc)
	}

	plan := func(outline ...string) []byte {
		var ts []pipeline.Tool
		for _, n := range outline {
			ts = append(ts, byName[n])
		}
		s, b, err := selector.PlanSchema(ts, selector.PlanLimits{})
		if err != nil {
			t.Fatal(err)
		}
		if !b.Bounded {
			t.Errorf("plan of %v: unbounded", outline)
		}
		return s
	}
	g, fs := compile(plan("pdf-extract", "pdf-extract", "compare"))
	good := `{"steps": [
		{"id": "s1", "function": "pdf-extract", "arguments": {"space": "docs", "path": "pricing-2024.pdf"}},
		{"id": "s2", "function": "pdf-extract", "arguments": {"space": "docs", "path": "pricing-2025.pdf"}},
		{"id": "s3", "function": "compare", "arguments": {"a": "{{steps.s1.output.text}}", "b": "{{steps.s2.output.text}}", "a_label": "{{steps.s1.output.path}}"}}
	]}`
	if !matches(g, good) {
		t.Errorf("the plan grammar rejects a valid plan")
	}
	if !accepts(fs, good) {
		t.Errorf("the exported format rejects a valid plan")
	}
	if _, err := chains.ParsePlan([]byte(good)); err != nil {
		t.Errorf("chains.ParsePlan: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(good, "{{steps.s1.output.text}}", "{{steps.s1.outputs}}", 1),
		strings.Replace(good, "{{steps.s1.output.text}}", "{{steps.s3.output.text}}", 1),
		strings.Replace(good, "{{steps.s1.output.text}}", "{{steps.s1.output.num_pages}}", 1),
		strings.Replace(good, `"path": "pricing-2024.pdf"`, `"path": "{{steps.s2.output.path}}"`, 1),
		strings.Replace(good, `"space": "docs"`, `"space": "elsewhere"`, 1),
	} {
		if matches(g, bad) {
			t.Errorf("the plan grammar accepts %s", bad)
		}
		if accepts(fs, bad) {
			t.Errorf("the exported format accepts %s", bad)
		}
	}
	g, fs = compile(plan("list-files", "pdf-extract", "summarize"))
	good = `{"steps": [
		{"id": "s1", "function": "list-files", "arguments": {"space": "docs", "dir": "papers", "pattern": "*.pdf"}},
		{"id": "s2", "function": "pdf-extract", "arguments": {"space": "docs", "path": "{{steps.s1.output.files[0].path}}"}},
		{"id": "s3", "function": "summarize", "arguments": {"text": "{{steps.s2.output.text}}", "max_words": 50}}
	]}`
	if !matches(g, good) || !accepts(fs, good) {
		t.Errorf("the summarize plan is rejected by the grammar (%v) or the format", matches(g, good))
	}
}
