package guard

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// The guard as the Manager's gate, over the real delete-file and a real
// audit log: held (the file stays), approved (deleted), denied (refused),
// every decision in a verified chain.
func TestGateInThePipeline(t *testing.T) {
	space := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(space, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"bot": {{Kind: builtin.KindReadSpace, Arg: "*"}, {Kind: builtin.KindWriteSpace, Arg: "docs"}}}}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"docs": space}, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	clk := &clock{t: time.Now()}
	g := newGuard(t, t.TempDir(), clk, "read-file")
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy, Audit: log, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(tool, params string) (*pipeline.Result, error) {
		return m.Call(context.Background(), pipeline.Request{Tool: tool, Params: []byte(params), Caller: "bot"})
	}

	_, err = call("delete-file", `{"space":"docs","path":"a.txt"}`)
	var ivr *pipeline.IntentVerificationRequired
	if !errors.As(err, &ivr) || pipeline.ExitCode(err) != 23 {
		t.Fatalf("unconfirmed delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(space, "a.txt")); err != nil {
		t.Fatalf("a held call deleted the file: %v", err)
	}
	if _, err := g.Decide(ivr.ID, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	if _, err := call("delete-file", `{"space":"docs","path":"a.txt"}`); err != nil {
		t.Fatalf("approved delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(space, "a.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("approved delete left the file: %v", err)
	}
	_, err = call("delete-file", `{"space":"docs","path":"b.txt"}`)
	if !errors.As(err, &ivr) {
		t.Fatal(err)
	}
	g.Decide(ivr.ID, Deny, "boss")
	if _, err := call("delete-file", `{"space":"docs","path":"b.txt"}`); !errors.Is(err, pipeline.ErrIntentMisaligned) {
		t.Fatalf("denied delete: %v", err)
	}
	if _, err := os.Stat(filepath.Join(space, "b.txt")); err != nil {
		t.Fatalf("a denied call deleted the file: %v", err)
	}
	if _, err := call("read-file", `{"space":"docs","path":"b.txt"}`); err != nil {
		t.Fatalf("reviewed read: %v", err)
	}
	if _, err := call("calculator", `{"expression":"1+1"}`); err != nil {
		t.Fatal(err)
	}

	recs, err := audit.Tail(logPath, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ tool, intent, reviewer, errKind string }{
		{"delete-file", pipeline.IntentRequired, "", pipeline.KindIntentVerificationRequired},
		{"delete-file", pipeline.IntentApproved, "boss", ""},
		{"delete-file", pipeline.IntentRequired, "", pipeline.KindIntentVerificationRequired},
		{"delete-file", pipeline.IntentDenied, "boss", pipeline.KindIntentMisaligned},
		{"read-file", pipeline.IntentQueued, "", ""},
		{"calculator", "", "", ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.Tool != w.tool || r.Intent != w.intent || r.Reviewer != w.reviewer || r.Error != w.errKind || (w.intent != "" && r.Review == "") {
			t.Errorf("record %d: %s intent %q review %q reviewer %q error %q, want %+v", i, r.Tool, r.Intent, r.Review, r.Reviewer, r.Error, w)
		}
	}
	if rep, err := audit.Verify(logPath); err != nil || !rep.OK() {
		t.Fatalf("audit verify: %+v %v", rep, err)
	}
}
