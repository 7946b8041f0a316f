package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSelectAndPlan runs the real commands: decisions printed, nothing run
// (the audit log stays empty), "none" with the closest tool and its raw
// similarity, missing files named, --json complete.
func TestSelectAndPlan(t *testing.T) {
	e := newEnv(t, "ollama:\n  host: http://127.0.0.1:1\n")

	r := e.run("select", "--model", "none", "tell", "me", "a", "joke", "about", "cats")
	r.expect(t, 0, "none: no tool fits (no-LLM mode)", "no-LLM mode")
	if !strings.Contains(r.stdout, "closest: ") || !strings.Contains(r.stdout, "(raw cosine), coverage 0.00 (threshold 0.40)") {
		t.Errorf("none does not name the closest tool with its raw similarity:\n%s", r.stdout)
	}

	r = e.run("select", "--model", "none", "read hello.txt")
	r.expect(t, 0, `tool: read-file {"path":"hello.txt","space":"documents"} (no-LLM mode)`, "")
	if !strings.Contains(r.stdout, "similarity 0.") {
		t.Errorf("no raw similarity shown:\n%s", r.stdout)
	}

	// A model that was asked for and is not reachable: an error that says
	// how to get it, not a quiet fall back to the no-LLM mode.
	r = e.run("select", "--model", "qwen3:0.6b", "read hello.txt")
	r.expect(t, 5, "", "is not reachable")
	if !strings.Contains(r.stderr, "ollama pull qwen3:0.6b") || strings.Contains(r.stdout, "tool: read-file") {
		t.Errorf("an unreachable model:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	r = e.run("select", "--model", "none", "--json", "what is 2 * (3 + 4)")
	r.expect(t, 0, "", "")
	var sel struct {
		Mode        string          `json:"mode"`
		Function    string          `json:"function"`
		Arguments   json.RawMessage `json:"arguments"`
		Validation  string          `json:"validation"`
		MinCoverage float64         `json:"min_coverage"`
		Candidates  []struct {
			Name  string             `json:"name"`
			Score map[string]float64 `json:"score"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sel); err != nil {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	if sel.Mode != "no-llm" || sel.Function != "calculator" || compactArgs(sel.Arguments) != `{"expression":"2 * (3 + 4)"}` || sel.Validation != "ok" || sel.MinCoverage != 0.4 {
		t.Errorf("--json selection: %+v", sel)
	}
	if len(sel.Candidates) < 6 {
		t.Fatalf("--json lists %d candidates", len(sel.Candidates))
	}
	for _, c := range sel.Candidates {
		if _, ok := c.Score["similarity"]; !ok {
			t.Errorf("%s has no raw similarity", c.Name)
		}
		if _, ok := c.Score["coverage"]; !ok {
			t.Errorf("%s has no coverage", c.Name)
		}
	}

	// Files that are not there: exit 1, each one named; a.pdf is found by
	// its bare name in papers/ (newEnv), b.pdf is nowhere.
	r = e.run("select", "--model", "none", "compare the pricing in x.pdf and y.pdf")
	r.expect(t, 1, "", "not found: x.pdf, y.pdf")
	r = e.run("plan", "--model", "none", "compare the pricing in x.pdf and y.pdf")
	r.expect(t, 1, "", "not found: x.pdf, y.pdf")
	r = e.run("select", "--model", "none", "compare the pricing in a.pdf and b.pdf")
	r.expect(t, 1, "", "not found: b.pdf (file named")

	// papers/a.pdf is there (newEnv): a one-step plan in no-LLM mode.
	r = e.run("plan", "--model", "none", "extract the text of papers/a.pdf")
	r.expect(t, 0, "plan (no-LLM mode): 1 step(s)", "")
	if !strings.Contains(r.stdout, `s1  `) || !strings.Contains(r.stdout, `"path":"papers/a.pdf"`) {
		t.Errorf("plan:\n%s", r.stdout)
	}
	r = e.run("plan", "--model", "none", "--json", "book a flight to Tokyo")
	r.expect(t, 0, `"steps": []`, "")

	r = e.run("plan", "--model", "none", "what's the weather in Paris")
	r.expect(t, 0, "plan (no-LLM mode): no steps", "")

	r = e.run("select")
	r.expect(t, 2, "", "needs the request")
	r = e.run("select", "--help")
	r.expect(t, 0, "runs nothing", "")

	// Nothing ran: no audit record.
	r = e.run("audit", "tail")
	if strings.Contains(r.stdout, "read-file") || strings.Contains(r.stdout, "calculator") {
		t.Errorf("select or plan ran a tool:\n%s", r.stdout)
	}
}

// TestEvalNoFit runs `airs eval nofit` on the committed sets.
func TestEvalNoFit(t *testing.T) {
	e := newEnv(t, "")
	data := filepath.Join("..", "..", "evals", "data")
	r := e.run("eval", "nofit", "--realistic", filepath.Join(data, "realistic.txt"), "--offtopic", filepath.Join(data, "offtopic.txt"), "--json")
	r.expect(t, 0, "", "")
	var f struct {
		Threshold   float64 `json:"threshold"`
		Realistic   int     `json:"realistic"`
		OffTopic    int     `json:"offtopic"`
		NoneRate    float64 `json:"offtopic_none_rate"`
		RefusedRate float64 `json:"realistic_refused_rate"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &f); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if f.Realistic < 60 || f.OffTopic < 60 || f.NoneRate < 0.9 || f.RefusedRate > 0.05 {
		t.Errorf("eval nofit: %+v", f)
	}
	if _, err := os.Stat(filepath.Join(data, "offtopic.txt")); err != nil {
		t.Fatal(err)
	}
}

// TestSelectAndPlanAnswerWithChoices: several files that fit the request
// equally well are answered with the candidates, never a guess; --json
// gives them as a structured field.
func TestSelectAndPlanAnswerWithChoices(t *testing.T) {
	e := newEnv(t, "ollama:\n  host: http://127.0.0.1:1\n")
	os.MkdirAll(filepath.Join(e.docs, "contracts"), 0o755)
	for _, f := range []string{"lease-2023.txt", "lease-2024.txt"} {
		os.WriteFile(filepath.Join(e.docs, "contracts", f), []byte("a lease\n"), 0o644)
	}
	for _, cmd := range []string{"select", "plan"} {
		r := e.run(cmd, "--model", "none", "--json", "read the lease")
		if r.code == 0 {
			t.Fatalf("%s: exit 0 for an ambiguous request:\n%s", cmd, r.stdout)
		}
		var out struct {
			Error   string `json:"error"`
			Choices []struct {
				Space string `json:"space"`
				Path  string `json:"path"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%s --json: %v\n%s\n%s", cmd, err, r.stdout, r.stderr)
		}
		if out.Error != "ambiguous" || len(out.Choices) != 2 ||
			out.Choices[0].Path != "contracts/lease-2023.txt" || out.Choices[1].Path != "contracts/lease-2024.txt" || out.Choices[0].Space != "documents" {
			t.Errorf("%s --json: %+v", cmd, out)
		}
		r = e.run(cmd, "--model", "none", "read the lease")
		if r.code == 0 || !strings.Contains(r.stderr, "2. contracts/lease-2024.txt") {
			t.Errorf("%s: want the numbered choices on stderr, got exit %d:\n%s", cmd, r.code, r.stderr)
		}
	}
}
