package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// airs audit tail marks speculative records and names the speculation a
// real call was answered from.
func TestAuditTailMarksSpeculation(t *testing.T) {
	e := newEnv(t, "")
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := audit.Open(filepath.Join(e.home, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, r := range []*audit.Record{
		{Time: now, CallID: "spec-call-1", Caller: "tester", Tool: "read-file", Outcome: "ok", ParamsSHA256: strings.Repeat("ab", 32), Speculative: true},
		{Time: now, CallID: "call-2", Caller: "tester", Tool: "read-file", Outcome: "ok", ParamsSHA256: strings.Repeat("ab", 32), SpeculativeHit: true, SpeculationOf: "spec-call-1"},
		{Time: now, CallID: "call-3", Caller: "tester", Tool: "calculator", Outcome: "ok", ParamsSHA256: strings.Repeat("ab", 32)},
	} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	r := e.run("audit", "tail")
	r.expect(t, 0, "[speculative]", "")
	if !strings.Contains(r.stdout, "[from spec-call-1]") || strings.Count(r.stdout, "[speculative]") != 1 {
		t.Fatalf("audit tail:\n%s", r.stdout)
	}
}
