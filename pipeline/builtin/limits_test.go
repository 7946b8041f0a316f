package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Limits agree with latency classes: each size-limited
// builtin, called through the Manager at its largest accepted input in its
// costliest shape, finishes well within its class's budget. The check is on
// the process's CPU time (getrusage), at most half the class budget: on
// this shared 2-core box the wall time measures the neighbours as much as
// the tool, while the CPU time is what the tool costs — on an idle machine
// the wall time of these single-threaded handlers is about their CPU time.
// The call itself runs under MaxTimeout, so a slow run is measured rather
// than cut, and its wall time is logged. Run under the race detector (make
// test) the margin covers its 5-10× slowdown.
func TestBuiltinLimitsFitClass(t *testing.T) {
	dir := t.TempDir()
	m := builtinManager(t, map[string]string{"documents": dir})

	// read-file: a text file of the largest max_bytes.
	writeFile(t, filepath.Join(dir, "big.txt"), []byte(strings.Repeat("Pro plan: $30 per month, basic $10.\n", readMaxMax/36+1)[:readMaxMax]))
	// pdf-extract: a PDF of the largest size, all text.
	writeFile(t, filepath.Join(dir, "big.pdf"), bigPDF(pdfMaxFile-(1<<20)))
	// list-files: more entries than a walk visits.
	makeTree(t, filepath.Join(dir, "tree"), listMaxVisit/1000+1)
	deep := strings.Repeat("(", 199) + "1" + strings.Repeat("+1)", 199)
	calc := deep + strings.Repeat("+1", (1000-len(deep))/2)

	type check struct {
		name, tool string
		params     map[string]any
		truncated  bool // the result must say truncated
	}
	var checks []check
	for _, shape := range []string{"alphabet", "permuted", "prices", "one line"} {
		w := compareWorst(shape)
		checks = append(checks, check{"compare/" + shape, "compare", map[string]any{"a": w[0], "b": w[1]}, true})
	}
	checks = append(checks,
		check{"summarize", "summarize", map[string]any{"text": summarizeWorst(), "max_words": 2000}, false},
		check{"read-file", "read-file", map[string]any{"space": "documents", "path": "big.txt", "max_bytes": readMaxMax}, false},
		check{"pdf-extract", "pdf-extract", map[string]any{"space": "documents", "path": "big.pdf", "max_chars": pdfMaxMaxChars}, true},
		check{"list-files/walk", "list-files", map[string]any{"space": "documents", "pattern": "*.none", "recursive": true, "limit": listMaxLimit}, true},
		check{"list-files/limit", "list-files", map[string]any{"space": "documents", "recursive": true, "limit": listMaxLimit}, true},
		check{"calculator", "calculator", map[string]any{"expression": calc}, false},
	)
	classes := map[string]pipeline.LatencyClass{}
	for name, e := range testTools(t, nil) {
		classes[name] = e.Tool.LatencyClass
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			params, err := json.Marshal(c.params)
			if err != nil {
				t.Fatal(err)
			}
			budget := pipeline.ClassTimeouts[classes[c.tool]]
			runtime.GC() // the garbage of earlier tests is not this call's cost
			c0, t0 := cpuTime(t), time.Now()
			res, err := m.Call(context.Background(), pipeline.Request{Tool: c.tool, Params: params, Caller: "root", Timeout: pipeline.MaxTimeout})
			cpu, wall := cpuTime(t)-c0, time.Since(t0)
			if err != nil {
				t.Fatalf("%v (after %v)", err, wall)
			}
			t.Logf("%d bytes of params: CPU %v, wall %v; class budget %v", len(params), cpu, wall, budget)
			if cpu > budget/2 {
				t.Errorf("the largest %s input took %v of CPU: more than half its class budget (%v); lower its limits or make it faster", c.tool, cpu, budget)
			}
			var out struct {
				Truncated bool `json:"truncated"`
			}
			if err := json.Unmarshal(res.Output, &out); err != nil {
				t.Fatal(err)
			}
			if out.Truncated != c.truncated {
				t.Errorf("truncated = %v, want %v: the input is not at the limit it should test", out.Truncated, c.truncated)
			}
		})
	}
}

// makeTree makes dirs folders of 1000 empty files each under root, by
// touch (one process per folder, a few hundred ms in all; 50,000
// os.WriteFile calls take ten seconds under the race detector).
func makeTree(t *testing.T, root string, dirs int) {
	t.Helper()
	names := make([]string, 1000)
	for f := range names {
		names[f] = fmt.Sprintf("f%04d.txt", f)
	}
	for d := range dirs {
		sub := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		touch := exec.Command("touch", names...)
		touch.Dir = sub
		if out, err := touch.CombinedOutput(); err != nil {
			t.Fatalf("touch: %v\n%s", err, out)
		}
	}
}
