package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestEvalBFCLUsage: what `airs eval bfcl` checks before and around
// bfcl.Run — bad usage is exit 2, a model it cannot build exit 1, and
// without --json a table with the overall line.
func TestEvalBFCLUsage(t *testing.T) {
	e := newEnv(t, "")
	data, _ := filepath.Abs("../../evals/bfcl/testdata")
	for _, args := range [][]string{{"--data", data, "--categories", "nope"}, {"--data", data, "extra"}, {"--bogus"}} {
		if r := e.run(append([]string{"eval", "bfcl"}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
	e.run("eval", "bfcl", "--data", data, "--model", "word2vec").expect(t, 1, "", `model "word2vec": unknown model`)
	r := e.run("eval", "bfcl", "--data", data, "--categories", "multiple")
	r.expect(t, 0, "overall", "no-LLM mode")
	if !strings.Contains(r.stdout, "model none, ") {
		t.Errorf("no model line:\n%s", r.stdout)
	}
}

// TestEvalRetrievalCLI: --data takes several files and flags anywhere;
// one JSON line per dataset and method.
func TestEvalRetrievalCLI(t *testing.T) {
	e := newEnv(t, "")
	dir, _ := filepath.Abs("../../evals/retrieval/testdata")
	f := func(n string) string { return filepath.Join(dir, n) }
	r := e.run("eval", "retrieval", "--data", f("metatool_tools.jsonl"), f("metatool_queries.jsonl"), "--json", f("stabletoolbench_queries.jsonl.gz"))
	r.expect(t, 0, `{"dataset":"metatool","method":"airs","n":90,`, "indexing")
	if n := strings.Count(r.stdout, `"dataset":`); n != 4 {
		t.Errorf("%d JSON lines, want 4 (2 datasets × 2 methods):\n%s", n, r.stdout)
	}
	r = e.run("eval", "retrieval", "--quiet", "--data", f("metatool_tools.jsonl"), f("metatool_queries.jsonl"))
	r.expect(t, 0, "ndcg@5", "")
	if r.stderr != "" {
		t.Errorf("--quiet: stderr %q", r.stderr)
	}
	e.run("eval", "retrieval").expect(t, 2, "", "--data FILE… is required")
	e.run("eval", "retrieval", "--embedder", "word2vec", "--data", f("metatool_tools.jsonl"), f("metatool_queries.jsonl")).expect(t, 1, "", "word2vec")
	e.run("eval", "retrieval", "--data", f("missing.jsonl")).expect(t, 2, "", "set DATA_DIR")
}

// TestEvalRetrievalReranker: --reranker model re-ranks with the committed
// reranker (its own line per dataset and method, as without), none keeps
// the default, a file that is not a reranker and a reranker fitted over
// another embedder are refused with what to do.
func TestEvalRetrievalReranker(t *testing.T) {
	e := newEnv(t, "")
	dir, _ := filepath.Abs("../../evals/retrieval/testdata")
	data := []string{filepath.Join(dir, "metatool_tools.jsonl"), filepath.Join(dir, "metatool_queries.jsonl")}
	run := func(args ...string) runResult {
		return e.run(append(append([]string{"eval", "retrieval", "--quiet", "--json", "--data"}, data...), args...)...)
	}
	// The committed reranker was fitted over the tool model alone.
	run("--embedder", "model", "--reranker", "model").expect(t, 0, `"method":"airs"`, "")
	run("--reranker", "model").expect(t, 2, "", "add --embedder model")
	run("--reranker", "none").expect(t, 0, `"method":"airs"`, "")
	bad := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(bad, []byte(`{"version":1}`), 0o600)
	run("--reranker", bad).expect(t, 2, "", "refit it with 'airs train retrieval --reranker'")
	r := embeddings.CommittedReranker()
	if r == nil {
		t.Fatal("no committed reranker")
	}
	other := *r
	other.Embedder = "tooltext:0000000000000000"
	b, _ := other.Marshal()
	os.WriteFile(bad, b, 0o600)
	run("--embedder", "model", "--reranker", bad).expect(t, 1, "", "fitted over embedder tooltext:0000000000000000")
}
