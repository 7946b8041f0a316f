package httpapi

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/session"
)

func decodeBody(t *testing.T, url, token, body string) (int, map[string]any) {
	t.Helper()
	resp := post(t, url, token, body)
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return resp.StatusCode, out
}

// With recording on, /v1/select and /v1/plan are recorded like chat turns:
// the decision, its candidates, and an execution "skipped" (they run
// nothing); the answer carries the record's ID.
func TestServedSelectAndPlanAreRecorded(t *testing.T) {
	base, cfg := newServed(t)
	code, sel := decodeBody(t, base+"/v1/select", "t-web", `{"text":"what is (12.5 + 7) * 3"}`)
	if code != 200 || sel["function"] != "calculator" || sel["record_id"] == nil {
		t.Fatalf("select: %d %v", code, sel)
	}
	code, plan := decodeBody(t, base+"/v1/plan", "t-web", `{"text":"what is (12.5 + 7) * 3"}`)
	if code != 200 || plan["plan"] == nil || plan["record_id"] == nil {
		t.Fatalf("plan: %d %v", code, plan)
	}
	recs, err := session.ReadFile(filepath.Join(cfg.Home, "sessions", "sessions.jsonl"))
	if err != nil || len(recs) != 2 {
		t.Fatalf("session log: %v, %d records", err, len(recs))
	}
	s, p := recs[0], recs[1]
	if s.ID != sel["record_id"] || s.Channel != "serve" || s.Caller != "web" || s.Request != "what is (12.5 + 7) * 3" ||
		s.Call == nil || s.Call.Tool != "calculator" || s.Call.Arguments["expression"] == nil ||
		len(s.Candidates) == 0 || s.Execution == nil || s.Execution.Outcome != session.OutcomeSkipped {
		t.Errorf("select record %+v", s)
	}
	if p.ID != plan["record_id"] || p.Caller != "web" || len(p.Steps) != 1 || p.Steps[0].Tool != "calculator" ||
		p.Call != nil || p.Execution == nil || p.Execution.Outcome != session.OutcomeSkipped || p.Validation == nil || !p.Validation.Valid {
		t.Errorf("plan record %+v", p)
	}
}

// Through the real engine, a pipeline's YAML and structure errors are the
// client's (400/422), a tool the caller cannot reach keeps its kind's
// status.
func TestServedPipelineErrors(t *testing.T) {
	base, _ := newServed(t)
	for _, c := range []struct {
		yaml   string
		status int
		kind   string
	}{
		{"steps: [\n", 400, "invalid_yaml"},
		{"steps:\n  - {id: a, tool: calculator, params: {expression: \"1\"}, needs: [b]}\n  - {id: b, tool: calculator, params: {expression: \"1\"}, needs: [a]}\n", 422, "invalid_pipeline"},
		{"steps:\n  - {id: a, tool: no-such-tool}\n", 404, "tool_not_found"},
		{"inputs: {n: {type: integer}}\nsteps:\n  - {id: a, tool: calculator, params: {expression: \"1\"}}\n", 422, "invalid_pipeline"}, // required input missing
	} {
		body, _ := json.Marshal(map[string]string{"yaml": c.yaml})
		code, out := decodeBody(t, base+"/v1/pipelines/run", "t-web", string(body))
		if code != c.status || out["error"] != c.kind || out["hint"] == nil {
			t.Errorf("%q: %d %v, want %d %s", c.yaml, code, out, c.status, c.kind)
		}
	}
}
