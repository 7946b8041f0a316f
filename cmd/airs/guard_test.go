package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline/audit"
)

// writeChainedLog writes records as a valid audit log (each line's prev is
// the SHA-256 of the line before, as audit.Log writes it).
func writeChainedLog(t *testing.T, path string, recs []audit.Record) {
	t.Helper()
	prev := audit.Genesis
	var buf []byte
	for i := range recs {
		recs[i].Seq, recs[i].Prev = uint64(i+1), prev
		b, err := json.Marshal(recs[i])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		prev = hex.EncodeToString(sum[:])
		buf = append(append(buf, b...), '\n')
	}
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
}

// `airs guard train` on an audit log, then the gate in force in the next
// `airs call`: the habitual call runs with its score in the record, a tool
// the agent never called is held (exit 23, a confirmation id) until
// `airs review approve`, and `airs guard status` names the model.
func TestGuardTrainAndGate(t *testing.T) {
	e := newEnv(t, "")
	e.run("guard", "status").expect(t, 0, "anomaly gate: off", "")
	e.run("guard", "train").expect(t, 1, "", "reading the audit log")

	// Two weeks of the documented traffic, plus tester's habit: the
	// calculator, every hour of every day (so the hour this test runs at
	// is usual for it).
	start := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -15)
	var recs []audit.Record
	for _, c := range traffic.Normal(start, 14, 5) {
		recs = append(recs, audit.Record{Time: c.At, CallID: "t", Caller: c.Caller, Provider: "builtin", Tool: c.Tool,
			ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: c.Size, Outcome: "ok"})
	}
	for h := 0; h < 14*24; h++ {
		for k := 0; k < 2; k++ {
			at := start.Add(time.Duration(h)*time.Hour + time.Duration(k*20+h%17)*time.Minute)
			recs = append(recs, audit.Record{Time: at, CallID: "c", Caller: "tester", Provider: "builtin", Tool: "calculator",
				ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: 20 + h%7, Outcome: "ok"})
		}
	}
	for i := 1; i < len(recs); i++ { // time order, as a log is
		for j := i; j > 0 && recs[j].Time.Before(recs[j-1].Time); j-- {
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
	}
	logPath := filepath.Join(e.home, "audit.jsonl")
	writeChainedLog(t, logPath, recs)
	e.run("audit", "verify").expect(t, 0, "chain intact", "")

	r := e.run("guard", "train", "--json")
	r.expect(t, 0, `"version"`, "")
	var tr struct {
		Model, Version string
		Calls, Agents  int
	}
	if err := json.Unmarshal([]byte(r.stdout), &tr); err != nil || tr.Calls != len(recs) || tr.Agents < 2 ||
		tr.Model != filepath.Join(e.home, "guard", "anomaly.model") {
		t.Fatalf("train: %+v %v\n%s", tr, err, r.stdout)
	}
	e.run("guard", "status").expect(t, 0, "model: "+tr.Model+" (version "+tr.Version+")", "")

	e.run("call", "calculator", "--args", `{"expression":"1+2"}`).expect(t, 0, "3", "")
	held := e.run("call", "list-files", "--args", `{"space":"documents"}`)
	held.expect(t, 23, "", "intent verification required")
	id := confirmationID.FindString(held.stderr)
	if id == "" {
		t.Fatalf("no confirmation id:\n%s", held.stderr)
	}
	e.run("review").expect(t, 0, "confirm (anomaly ", "")
	e.run("review", "approve", id).expect(t, 0, id+" approved", "")
	e.run("call", "list-files", "--args", `{"space":"documents"}`).expect(t, 0, "hello.txt", "")

	tail := e.run("audit", "tail", "--json", "-n", "3")
	var got []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(tail.stdout), "\n") {
		var rec audit.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		got = append(got, rec)
	}
	if len(got) != 3 {
		t.Fatalf("tail: %s", tail.stdout)
	}
	for i, want := range []struct {
		tool, intent string
		lo, hi       float64
	}{{"calculator", "", 0, 0.8}, {"list-files", "required", 0.95, 1}, {"list-files", "approved", 0.95, 1}} {
		g := got[i]
		if g.Tool != want.tool || g.Intent != want.intent || g.AnomalyModel != tr.Version || g.AnomalyScore == nil ||
			*g.AnomalyScore < want.lo || *g.AnomalyScore > want.hi {
			t.Errorf("record %d: %s intent %q model %q score %v, want %s %q score in [%v, %v]", i, g.Tool, g.Intent, g.AnomalyModel,
				g.AnomalyScore, want.tool, want.intent, want.lo, want.hi)
		}
	}
	e.run("audit", "verify").expect(t, 0, "chain intact", "")
}

// The eval's lines, exactly as the issue names them, and the goals it
// states (burst and novel ≥ 95% at 0.9, normal ≤ 0.5% at 0.8).
func TestEvalGuardJSON(t *testing.T) {
	e := newEnv(t, "")
	e.run("eval", "guard", "--help").expect(t, 0, "off-hours", "")
	r := e.run("eval", "guard", "--json", "--train-days", "21", "--test-days", "7")
	r.expect(t, 0, `"kind":"normal"`, "")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	kinds := []string{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		kind := m["kind"].(string)
		kinds = append(kinds, kind)
		prefix := "detected"
		if kind == "normal" {
			prefix = "fpr"
		}
		if len(m) != 5 || m["n"].(float64) < 50 {
			t.Fatalf("line %s: want kind, n and three rates", l)
		}
		for _, th := range []string{"@0.8", "@0.9", "@0.95"} {
			if _, ok := m[prefix+th]; !ok {
				t.Fatalf("line %s has no %s", l, prefix+th)
			}
		}
		switch kind {
		case "burst", "novel":
			if m["detected@0.9"].(float64) < 0.95 {
				t.Errorf("%s: %v detected at 0.9", kind, m["detected@0.9"])
			}
		case "normal":
			if m["fpr@0.8"].(float64) > 0.005 {
				t.Errorf("normal: fpr %v at 0.8", m["fpr@0.8"])
			}
		}
	}
	if strings.Join(kinds, " ") != "burst novel off-hours normal" {
		t.Fatalf("kinds %v", kinds)
	}
	e.run("eval", "guard").expect(t, 0, "false-positive rate", "")
	e.run("help", "guard").expect(t, 0, "airs guard train", "")
}

// `airs eval guard --generate` then `--train --test`: one line per kind,
// a burst's per factor, the normal line with the share held; a trace out
// of order is refused with its line; `airs guard trace` records the audit
// log as a trace; `airs guard status` says what the model can judge.
func TestEvalGuardTraces(t *testing.T) {
	e := newEnv(t, "")
	dir := t.TempDir()
	e.run("eval", "guard", "--generate", dir, "--seed", "3", "--test-minutes", "60").expect(t, 0, "written to", "")
	r := e.run("eval", "guard", "--train", filepath.Join(dir, "train.jsonl"), "--test", filepath.Join(dir, "test.jsonl"), "--json")
	r.expect(t, 0, `"kind":"burst-20x"`, "")
	kinds := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		kinds[m["kind"].(string)] = m
	}
	for _, k := range []string{"burst-5x", "burst-20x", "burst-50x", "novel", "payload", "path", "normal"} {
		if kinds[k] == nil {
			t.Errorf("no %s line in\n%s", k, r.stdout)
		}
	}
	if n := kinds["normal"]; n == nil || n["held"] == nil || n["most_held_agent"] == nil || n["fpr@0.8"].(float64) > 0.01 {
		t.Errorf("normal line %v", n)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"time\":\"2026-01-05T10:00:01Z\",\"agent\":\"a\",\"tool\":\"t\",\"label\":\"normal\"}\n{\"time\":\"2026-01-05T10:00:00Z\",\"agent\":\"a\",\"tool\":\"t\",\"label\":\"normal\"}\n"), 0o600)
	e.run("eval", "guard", "--train", bad, "--test", bad).expect(t, 1, "", "trace line 2")
	e.run("eval", "guard", "--train", bad).expect(t, 2, "", "--train and --test go together")

	// A recorded audit log, as a trace; trained on, status says per agent
	// what can be judged (not the hour of day after two days).
	start := time.Now().UTC().Add(-48 * time.Hour)
	var recs []audit.Record
	for i := range 300 {
		agent := []string{"ana", "bob"}[i%2]
		recs = append(recs, audit.Record{Time: start.Add(time.Duration(i) * 7 * time.Minute), CallID: "c", Caller: agent, Provider: "builtin",
			Tool: "calculator", ParamsSHA256: strings.Repeat("0", 64), ParamsBytes: 20, Outcome: "ok"})
	}
	writeChainedLog(t, filepath.Join(e.home, "audit.jsonl"), recs)
	out := filepath.Join(dir, "audit-trace.jsonl")
	e.run("guard", "trace", "--out", out).expect(t, 0, "", "300 calls written")
	if b, err := os.ReadFile(out); err != nil || strings.Count(string(b), "\n") != 300 || !strings.Contains(string(b), `"label":"normal"`) {
		t.Fatalf("trace: %v\n%.300s", err, b)
	}
	e.run("guard", "train").expect(t, 0, "2 agents", "")
	st := e.run("guard", "status")
	st.expect(t, 0, "what the model can judge", "")
	if !strings.Contains(st.stdout, "ana") || !strings.Contains(st.stdout, "not yet") {
		t.Errorf("status:\n%s", st.stdout)
	}
}
