//go:build e2e

package chat

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// TestModelMode runs the REPL against the real Ollama server of
// scripts/e2e.sh with its tiny random-weight model. The model's choices
// are noise, so the only tool offered is read-report, whose schema admits
// one call (report.txt, ~20 KB): whatever the model emits under the
// grammar is either that call or "none" (with this model and seed: "none",
// answered directly — the call path is covered by TestResultToTheModel
// with an in-process model). Either way the answer must be
// streamed from the model; a call's large result must reach the model cut,
// with a visible note; the record must name the model and its raw output.
func TestModelMode(t *testing.T) {
	if os.Getenv("AIRS_E2E") != "1" {
		t.Skip("e2e: no server; run `bash scripts/e2e.sh ./internal/chat/` (make e2e)")
	}
	model := os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	r := newRigWith(t, model, func(r *rig, reg *pipeline.Registry, opts builtin.Options) {
		hs, err := builtin.Handlers(opts)
		must(t, err)
		must(t, reg.Register("test", pipeline.Tool{
			Name: "read-report", Version: "1.0.0",
			Description: "Read the large report text file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"space":{"enum":["documents"]},"path":{"enum":["report.txt"]}},` +
				`"required":["space","path"],"additionalProperties":false}`),
			Trust: pipeline.TL3, LatencyClass: pipeline.Fast, Idempotent: true,
		}, hs["builtin.read-file"]))
	}, func(_ *pipeline.Registry, o *engine.Options) { o.MaxResultBytes = 1024 })
	if r.eng.AnswerModel() == nil {
		t.Fatalf("no model: %s", r.eng.ModelNotice())
	}
	r.eng.Selector().Config.NumPredict = 256 // noise stops at the grammar's end or here
	r.wait = 5 * time.Minute
	r.start(Options{})
	m := r.expect(0, "mode: model "+model+" via Ollama")
	m = r.expect(m, "> ")
	requests := []string{"read the report"}
	for _, q := range requests {
		r.say(q)
		m = r.expect(m, "[model "+model+"]")
		m = r.expect(m, "\n> ")
	}
	r.stop()
	out := r.out.String()
	t.Logf("transcript:\n%s", out)

	recs := r.sessions()
	if len(recs) != len(requests) {
		t.Fatalf("%d records for %d requests", len(recs), len(requests))
	}
	turns := strings.Split(out, "[model "+model+"]")[1:]
	for i, rec := range recs {
		if rec.Model == nil || rec.Model.Backend != "ollama" || rec.Model.Name != model || rec.RawOutput == "" || rec.GrammarHash == "" {
			t.Errorf("record %d's model part: model %+v raw %q grammar %q", i, rec.Model, rec.RawOutput, rec.GrammarHash)
		}
		answer := turns[i]
		switch {
		case strings.HasPrefix(answer, " no tool fits"):
			// The model answered directly: something was streamed (or the
			// stream's error was shown) after the line.
			if rec.Call != nil {
				t.Errorf("none shown but call recorded: %+v", rec.Call)
			}
			rest := strings.TrimSpace(strings.SplitN(answer, "\n", 2)[1])
			if rest == ">" || rest == "" {
				t.Errorf("no direct answer was streamed:\n%s", answer)
			}
			t.Logf("request %d: none, answered directly", i)
		default:
			if !strings.Contains(answer, "ok: read-report") {
				t.Fatalf("the call did not run:\n%s", answer)
			}
			if !strings.Contains(answer, "note: the result (") || !strings.Contains(answer, "was truncated to 1024 bytes for the model's context") {
				t.Errorf("no truncation note:\n%s", answer)
			}
			if strings.Contains(answer, "a line of a large report") {
				t.Errorf("with a model the raw result is not printed, the answer is:\n%s", answer)
			}
			if rec.Execution == nil || rec.Execution.Outcome != "ok" {
				t.Errorf("execution: %+v", rec.Execution)
			}
			t.Logf("request %d: called read-report, result cut for the model", i)
		}
	}
}
