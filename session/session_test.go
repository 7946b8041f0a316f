package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sample(i int) Record {
	return Record{
		Session: "s1", Channel: "chat", Caller: "alice",
		Request: fmt.Sprintf("send the report #%d to bob", i),
		Candidates: []Candidate{
			{Tool: "mail.send", Score: 0.91, Components: map[string]float64{"semantic": 0.8, "trust": 1, "success": 0.97}},
			{Tool: "chat.post", Score: 0.42, Components: map[string]float64{"semantic": 0.4}},
		},
		GrammarHash: "sha256:abc",
		Model:       &Model{Backend: "ollama", Name: "qwen3:0.6b", Options: map[string]any{"temperature": 0.0, "seed": 7}},
		RawOutput:   `{"function":"mail.send","arguments":{"to":"bob","n":5,"x":5.0}}`,
		Call:        &Call{Tool: "mail.send", Arguments: map[string]any{"to": "bob", "n": json.Number("5"), "x": json.Number("5.0")}},
		Validation:  &Validation{Valid: true},
		Execution:   &Execution{Outcome: OutcomeOK, LatencyMS: 12.5},
		Latency:     &Latency{RetrievalMS: 1.2, GrammarMS: 0.05, GenerationMS: 80, ExecutionMS: 12.5, TotalMS: 94},
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "sessions.jsonl")
	fixed := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r, err := Open(path, Options{Now: func() time.Time { return fixed }})
	if err != nil {
		t.Fatal(err)
	}
	id, err := r.Record(context.Background(), sample(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Feedback(context.Background(), id, Feedback{Verdict: Corrected, Corrected: &Call{Tool: "mail.send", Arguments: map[string]any{"to": "carol"}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Record(context.Background(), sample(2)); !errors.Is(err, ErrClosed) {
		t.Errorf("record after close: %v", err)
	}
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	got := recs[0]
	if got.V != 1 || got.Kind != KindRequest || got.ID != id || !got.Time.Equal(fixed) {
		t.Errorf("defaults: %+v", got)
	}
	if got.Call.Arguments["n"] != json.Number("5") || got.Call.Arguments["x"] != json.Number("5.0") {
		t.Errorf("numbers not exact: %#v", got.Call.Arguments)
	}
	if got.Candidates[0].Components["success"] != 0.97 || got.Model.Name != "qwen3:0.6b" || got.Latency.GenerationMS != 80 {
		t.Errorf("fields lost: %+v", got)
	}
	if recs[1].Kind != KindFeedback || recs[1].Ref != id {
		t.Errorf("feedback record: %+v", recs[1])
	}
	merged, orphans := Merge(recs)
	if len(merged) != 1 || orphans != 0 || merged[0].Feedback == nil || merged[0].Feedback.Verdict != Corrected {
		t.Fatalf("merge: %+v %d", merged, orphans)
	}
	label, ok := merged[0].Label(false)
	if !ok || label.Arguments["to"] != "carol" {
		t.Errorf("label: %+v %v", label, ok)
	}
}

func TestLabel(t *testing.T) {
	call := &Call{Tool: "t", Arguments: map[string]any{}}
	cases := []struct {
		name     string
		rec      Record
		implicit bool
		want     *Call
		ok       bool
	}{
		{"accepted", Record{Call: call, Feedback: &Feedback{Verdict: Accepted}}, false, call, true},
		{"accepted none", Record{Feedback: &Feedback{Verdict: Accepted}}, false, nil, true},
		{"dismissed", Record{Call: call, Feedback: &Feedback{Verdict: Dismissed}}, true, nil, false},
		{"corrected to none", Record{Call: call, Feedback: &Feedback{Verdict: Corrected}}, false, nil, true},
		{"executed ok, implicit", Record{Call: call, Execution: &Execution{Outcome: OutcomeOK}}, true, call, true},
		{"executed ok, strict", Record{Call: call, Execution: &Execution{Outcome: OutcomeOK}}, false, nil, false},
		{"failed, implicit", Record{Call: call, Execution: &Execution{Outcome: OutcomeError}}, true, nil, false},
	}
	for _, c := range cases {
		got, ok := c.rec.Label(c.implicit)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: got %v %v", c.name, got, ok)
		}
	}
}

func TestRedaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	r, err := Open(path, Options{Redact: []string{"Password", "api_key"}})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{
		"user":     "bob",
		"PASSWORD": "hunter2",
		"nested":   map[string]any{"list": []any{map[string]any{"Api_Key": "sk-1", "keep": 1}}},
	}
	rec := sample(1)
	rec.Call = &Call{Tool: "login", Arguments: args}
	rec.RawOutput = `{"function":"login","arguments":{"user":"bob","password":"hunter2"}}`
	rec.Feedback = &Feedback{Verdict: Corrected, Corrected: &Call{Tool: "login", Arguments: map[string]any{"password": "hunter3"}}}
	rec.Model.Options["api_key"] = "sk-model"
	if _, err := r.Record(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	notJSON := sample(2)
	notJSON.RawOutput = "login(user=bob, password=hunter2)"
	if _, err := r.Record(context.Background(), notJSON); err != nil {
		t.Fatal(err)
	}
	clean := sample(3)
	clean.RawOutput = "no secrets here"
	if _, err := r.Record(context.Background(), clean); err != nil {
		t.Fatal(err)
	}
	r.Close()
	raw, _ := os.ReadFile(path)
	for _, secret := range []string{"hunter2", "hunter3", "sk-1", "sk-model"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("secret %q written to the log", secret)
		}
	}
	// The caller's values are untouched.
	if args["PASSWORD"] != "hunter2" || rec.Model.Options["api_key"] != "sk-model" {
		t.Error("redaction modified the caller's record")
	}
	recs, _ := ReadFile(path)
	got := recs[0]
	if got.Call.Arguments["PASSWORD"] != RedactedValue || got.Call.Arguments["user"] != "bob" {
		t.Errorf("call: %+v", got.Call.Arguments)
	}
	inner := got.Call.Arguments["nested"].(map[string]any)["list"].([]any)[0].(map[string]any)
	if inner["Api_Key"] != RedactedValue || inner["keep"] != json.Number("1") {
		t.Errorf("nested: %+v", inner)
	}
	want := []string{"/call/arguments/PASSWORD", "/call/arguments/nested/list/0/Api_Key", "/feedback/corrected/arguments/password", "/model/options/api_key", "/raw_output/arguments/password"}
	if strings.Join(got.Redacted, ",") != strings.Join(want, ",") {
		t.Errorf("redacted paths %q, want %q", got.Redacted, want)
	}
	if !strings.Contains(got.RawOutput, `"password":"[redacted]"`) || !strings.Contains(got.RawOutput, `"user":"bob"`) {
		t.Errorf("raw output %q", got.RawOutput)
	}
	if !strings.HasPrefix(recs[1].RawOutput, RedactedValue) {
		t.Errorf("non-JSON raw output mentioning password kept: %q", recs[1].RawOutput)
	}
	if recs[2].RawOutput != "no secrets here" || len(recs[2].Redacted) != 0 {
		t.Errorf("clean record changed: %+v", recs[2])
	}
}

// A multi-step turn's later steps are redacted like its first: their
// calls and raw outputs, with the paths named.
func TestRedactionTurnSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	r, err := Open(path, Options{Redact: []string{"password"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := sample(1)
	rec.TurnSteps = []TurnStep{
		{Step: 1, Call: &Call{Tool: "login", Arguments: map[string]any{"user": "bob"}}},
		{Step: 2, RawOutput: `{"function":"login","arguments":{"password":"hunter2"}}`,
			Call:       &Call{Tool: "login", Arguments: map[string]any{"password": "hunter2"}},
			Validation: &Validation{Valid: true}, Execution: &Execution{Outcome: OutcomeOK}},
		{Step: 3, RawOutput: "password is hunter4", Note: "stopped"},
	}
	if _, err := r.Record(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	r.Close()
	raw, _ := os.ReadFile(path)
	for _, secret := range []string{"hunter2", "hunter4"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("secret %q written to the log", secret)
		}
	}
	if rec.TurnSteps[1].Call.Arguments["password"] != "hunter2" {
		t.Error("redaction modified the caller's turn steps")
	}
	recs, _ := ReadFile(path)
	got := recs[0]
	want := []string{"/turn_steps/1/call/arguments/password", "/turn_steps/1/raw_output/arguments/password", "/turn_steps/2/raw_output"}
	if strings.Join(got.Redacted, ",") != strings.Join(want, ",") {
		t.Errorf("redacted paths %q, want %q", got.Redacted, want)
	}
	if len(got.TurnSteps) != 3 || got.TurnSteps[0].Call.Arguments["user"] != "bob" || got.TurnSteps[2].Note != "stopped" || got.TurnSteps[1].Execution.Outcome != OutcomeOK {
		t.Errorf("turn steps %+v", got.TurnSteps)
	}
}

func TestOffSwitch(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "off.jsonl")
	r, err := Open(path, Options{Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := r.Record(context.Background(), sample(1)); err != nil || id == "" {
		t.Fatalf("disabled record: %q %v", id, err)
	}
	r.SetEnabled(true) // cannot turn on a recorder opened disabled
	if r.Enabled() {
		t.Error("disabled recorder enabled")
	}
	r.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("disabled recorder created %s", path)
	}
	var nilR *Recorder
	if _, err := nilR.Record(context.Background(), sample(1)); err != nil || nilR.Close() != nil {
		t.Error("nil recorder should be a no-op")
	}

	// Pause and resume.
	path2 := filepath.Join(dir, "pause.jsonl")
	r2, err := Open(path2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r2.Record(context.Background(), sample(1))
	r2.SetEnabled(false)
	r2.Record(context.Background(), sample(2))
	r2.SetEnabled(true)
	r2.Record(context.Background(), sample(3))
	r2.Close()
	recs, _ := ReadFile(path2)
	if len(recs) != 2 || !strings.Contains(recs[1].Request, "#3") {
		t.Errorf("paused recorder wrote %d records", len(recs))
	}
}

func TestTornLastLineRecovered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torn.jsonl")
	r, _ := Open(path, Options{})
	for i := range 3 {
		if _, err := r.Record(context.Background(), sample(i)); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	good, _ := os.ReadFile(path)
	// A crash in the middle of the next write.
	torn := append(append([]byte(nil), good...), []byte(`{"v":1,"kind":"request","id":"x","req`)...)
	os.WriteFile(path, torn, 0o600)

	// The reader skips it and says so.
	f, _ := os.Open(path)
	rd := NewReader(f)
	n := 0
	for {
		_, err := rd.Next()
		if err != nil {
			break
		}
		n++
	}
	f.Close()
	if n != 3 || !rd.Torn() {
		t.Errorf("reader: %d records, torn=%v", n, rd.Torn())
	}

	// Open cuts it off, and appending continues on a clean line.
	r, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Recovered() != int64(len(torn)-len(good)) {
		t.Errorf("recovered %d bytes, want %d", r.Recovered(), len(torn)-len(good))
	}
	r.Record(context.Background(), sample(9))
	r.Close()
	recs, err := ReadFile(path)
	if err != nil || len(recs) != 4 || !strings.Contains(recs[3].Request, "#9") {
		t.Fatalf("after recovery: %d records, %v", len(recs), err)
	}

	// A file that is all torn (no newline at all) becomes empty.
	path2 := filepath.Join(t.TempDir(), "allTorn.jsonl")
	os.WriteFile(path2, []byte("\x00\x00\x00"), 0o600)
	r2, err := Open(path2, Options{})
	if err != nil || r2.Recovered() != 3 {
		t.Fatalf("all torn: %v %d", err, r2.Recovered())
	}
	r2.Close()
}

func TestReaderErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"v":2,"kind":"request","id":"a"}` + "\n", "newer than this reader"},
		{`{"kind":"request"}` + "\n", "no format version"},
		{"{\"v\":1}\nnot json\n", "line 2"},
	} {
		_, err := ReadAll(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.want)
		}
	}
	recs, err := ReadAll(strings.NewReader("\n" + `{"v":1,"kind":"feedback","id":"f","ref":"missing","feedback":{"verdict":"accepted"}}` + "\n\n"))
	if err != nil || len(recs) != 1 {
		t.Fatal(err, recs)
	}
	if _, orphans := Merge(recs); orphans != 1 {
		t.Errorf("orphans %d", orphans)
	}
}

func TestConcurrentWritersAndLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	r, err := Open(path, Options{MaxBatch: 32})
	if err != nil {
		t.Fatal(err)
	}
	// A second recorder on the same log (another process, in real use)
	// shares it: batches never interleave within a line.
	r2nd, err := Open(path, Options{MaxBatch: 32})
	if err != nil {
		t.Fatalf("a second recorder on the same log: %v", err)
	}
	var wg sync.WaitGroup
	const G, N = 8, 100
	for g := range G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := r
			if g%2 == 1 {
				r = r2nd
			}
			for i := range N {
				rec := sample(i)
				rec.ID = fmt.Sprintf("g%d-%d", g, i)
				if _, err := r.Record(context.Background(), rec); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r2nd.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		seen[rec.ID] = true
	}
	if len(recs) != G*N || len(seen) != G*N {
		t.Fatalf("%d records, %d distinct, want %d", len(recs), len(seen), G*N)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r2, _ := Open(filepath.Join(t.TempDir(), "x.jsonl"), Options{})
	defer r2.Close()
	if _, err := r2.Record(ctx, sample(1)); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	if _, err := r2.Record(context.Background(), Record{Kind: KindFeedback}); err == nil {
		t.Error("feedback without ref accepted")
	}
}

// A writer that died mid-write (another process, in real use) leaves a
// torn line; this recorder cuts it before its next batch, not only at Open,
// so its own line does not get glued to the fragment.
func TestTornLineOfAnotherWriterCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	r, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Record(context.Background(), sample(1)); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	torn := `{"v":1,"kind":"request","id":"half`
	f.WriteString(torn)
	f.Close()
	if _, err := r.Record(context.Background(), sample(2)); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadFile(path)
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v: the torn line must be cut", len(recs), err)
	}
	if r.Recovered() != int64(len(torn)) {
		t.Errorf("recovered %d bytes, want %d", r.Recovered(), len(torn))
	}
}
