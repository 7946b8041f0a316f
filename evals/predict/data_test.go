package predict

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/evals/bfcl"
)

// dataDir is $DATA_DIR/bfcl (DATA_DIR relative to the module root).
func dataDir(t *testing.T) string {
	d := os.Getenv("DATA_DIR")
	if d == "" {
		t.Skip("DATA_DIR is not set: the full BFCL data is needed (make conformance sets it)")
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join("..", "..", d)
	}
	d = filepath.Join(d, "bfcl")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("the full BFCL data is not at %s (DATA_DIR): %v", d, err)
	}
	return d
}

// TestNoLLMOnBFCL runs the no-LLM predictor on the full data — the
// product's own "does a candidate fit" decision included — and holds the
// goals: multiple function accuracy ≥ 0.97 with irrelevance ≥ 0.80.
func TestNoLLMOnBFCL(t *testing.T) {
	dir := dataDir(t)
	ctx := context.Background()
	pool, err := PoolTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewNoLLM(ctx, Options{Pool: pool, MinSimilarity: DefaultMinSimilarity, Parallel: true})
	if err != nil {
		t.Fatal(err)
	}
	var cats []string
	if c := os.Getenv("BFCL_CATEGORIES"); c != "" {
		cats = strings.Split(c, ",")
	}
	res, err := bfcl.Run(ctx, bfcl.Options{DataDir: dir, Categories: cats, Predictor: p}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	bfcl.WriteTable(&b, res)
	t.Logf("pool %d functions\n%s", len(pool), b.String())
	for _, r := range res {
		if r.Category == "multiple" && r.FunctionAcc < 0.97 {
			t.Errorf("multiple function_acc %.3f, goal ≥ 0.97", r.FunctionAcc)
		}
		if r.Category == "irrelevance" && r.FunctionAcc < 0.80 {
			t.Errorf("irrelevance function_acc %.3f, goal ≥ 0.80", r.FunctionAcc)
		}
		if os.Getenv("BFCL_FAILURES") != "" {
			for _, f := range r.Failures {
				t.Logf("%s %s %s", f.ID, f.ErrorType, f.Reason)
			}
		}
	}
}
