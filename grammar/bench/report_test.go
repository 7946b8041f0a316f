package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteSampling: the sampling-compliance section of CONFORMANCE.md
// carries the figures and the test's summary line.
func TestWriteSampling(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sampling.json")
	js := `{"budget":4000,"checked":450,"command":"JSB_SAMPLING=1 go test","compile_errors":48,"dead_ends":0,"draws":5,"invalid":0,"options":"MaxStringBytes 32","outputs":2250,"sample":500,"skipped":2,"skipped_ids":["a","b"],"skipped_why":["duplicate id","x"],"summary":"sampling: 500 sampled","tokens":{"max":2780,"p50":67,"p99":1061},"unterminated":0,"vocab":"qwen3"}`
	if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := writeSampling(&sb, p); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"## Sampling compliance", "| 450 | 2 | 2250 | 0 | 0 | 0 | 67 / 1061 / 2780 |", "- `a`: duplicate id\n- `b`: x\n", "sampling: 500 sampled", "500-schema sample", "within 4000 tokens"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if err := writeSampling(&sb, filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file is not an error")
	}
}
