package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestEvalEveryday runs `airs eval everyday` on the committed development
// suite in its fixture home: at least 95% of the plans are the ones a
// person meant, and no request that does not ask to delete gets a
// destructive step. The held-out set is reported in EVALS.md, not held to
// a goal here (it is not tuned on).
func TestEvalEveryday(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(airsBin, "eval", "everyday", "--json")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "AIRS_HOME="+t.TempDir(), "AIRS_CONFIG=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("airs eval everyday: %v\n%s", err, errb.String())
	}
	var rep struct {
		N                  int     `json:"n"`
		Right              int     `json:"right"`
		Accuracy           float64 `json:"accuracy"`
		DestructiveUnasked int     `json:"destructive_unasked"`
		Misses             []struct {
			Q string `json:"q"`
		} `json:"misses"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out.String())
	}
	if rep.N < 300 {
		t.Errorf("the suite has %d requests, want at least 300", rep.N)
	}
	if rep.Accuracy < 0.95 {
		t.Errorf("planned right %d of %d (%.1f%%), want >= 95%%; misses: %v", rep.Right, rep.N, 100*rep.Accuracy, rep.Misses)
	}
	if rep.DestructiveUnasked != 0 {
		t.Errorf("%d requests that do not ask to delete got a destructive step", rep.DestructiveUnasked)
	}
}
