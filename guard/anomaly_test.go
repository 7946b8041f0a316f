package guard

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// recSink keeps the records the Manager writes, in order.
type recSink struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (s *recSink) Append(r *audit.Record) error {
	s.mu.Lock()
	s.recs = append(s.recs, *r)
	s.mu.Unlock()
	return nil
}

func (s *recSink) last() audit.Record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[len(s.recs)-1]
}

// paramsOf is params of exactly c.Size bytes.
func paramsOf(size int) []byte {
	if size < 8 {
		size = 8
	}
	return []byte(`{"p":"` + strings.Repeat("x", size-8) + `"}`)
}

// The whole loop with real parts: two weeks of the documented traffic
// through the Manager (no model yet: nothing scored, the history fed),
// the audit records they leave read back as a training set (features
// equal to the evaluation's featurizer's, call for call), a model trained
// on them and installed without a restart; then a habitual call goes on
// with its score in the record, a never-called tool is held for a person
// (approved, it runs when sent again), and a burst is queued or held.
func TestAnomalyGateInThePipeline(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC) // a Monday
	calls := traffic.Normal(start, 14, 3)
	clk := &clock{t: start}
	g := newGuard(t, t.TempDir(), clk)
	var models anomaly.Holder
	sc := NewAnomalyScorer(&models, pipeline.DefaultAnomalyThresholds.Block)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	ok := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{}`), nil
	})
	for _, name := range []string{"read-file", "search", "list-dir", "write-file", "delete-file", "summarize", "send-email"} {
		tl := pipeline.Tool{Name: name, Version: "1.0.0", Trust: pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`)}
		if err := reg.Register("local", tl, ok); err != nil {
			t.Fatal(err)
		}
	}
	sink := &recSink{}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Audit: sink, Gate: g, Scorer: sc, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func(c traffic.Call) (*pipeline.Result, error) {
		clk.mu.Lock()
		clk.t = c.At
		clk.mu.Unlock()
		return m.Call(context.Background(), pipeline.Request{Tool: c.Tool, Caller: c.Caller, Params: paramsOf(c.Size)})
	}
	for _, c := range calls {
		if _, err := call(c); err != nil {
			t.Fatalf("%+v with no model: %v", c, err)
		}
	}
	if r := sink.last(); r.AnomalyModel != "" || r.AnomalyScore != nil || r.ParamsBytes == 0 {
		t.Fatalf("no model loaded, yet the record says %+v", r)
	}

	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	var buf []byte
	for _, r := range sink.recs {
		b, _ := json.Marshal(r)
		buf = append(append(buf, b...), '\n')
	}
	buf = append(buf, `{"seq":99,"torn`...) // a crash's torn tail is skipped
	os.WriteFile(logPath, buf, 0o600)
	ts, err := ReadTrainingSet(logPath, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	z := traffic.NewFeaturizer()
	if len(ts.Calls) != len(calls) {
		t.Fatalf("%d training calls from %d records (%d skipped), want %d", len(ts.Calls), ts.Records, ts.Skipped, len(calls))
	}
	for i, c := range calls {
		want := z.Features(traffic.Call{At: c.At, Caller: c.Caller, Tool: c.Tool, Size: len(paramsOf(c.Size))}, true)
		if ts.Calls[i] != want {
			t.Fatalf("call %d: from the audit log %+v, the featurizer %+v", i, ts.Calls[i], want)
		}
	}
	model, err := anomaly.Train(ts.Calls)
	if err != nil {
		t.Fatal(err)
	}
	models.Set(model)

	day := start.AddDate(0, 0, 14) // Monday after
	if _, err := call(traffic.Call{At: day.Add(10 * time.Hour), Caller: "alice", Tool: "read-file", Size: 80}); err != nil {
		t.Fatalf("alice's habit: %v", err)
	}
	r := sink.last()
	if r.AnomalyModel != model.Version() || r.AnomalyScore == nil || *r.AnomalyScore >= 0.8 || r.Intent != "" {
		t.Fatalf("alice's habit: record %+v (score %v)", r, r.AnomalyScore)
	}

	email := traffic.Call{At: day.Add(10*time.Hour + 5*time.Minute), Caller: "dave", Tool: "send-email", Size: 300}
	_, err = call(email)
	var ivr *pipeline.IntentVerificationRequired
	if !errors.As(err, &ivr) {
		t.Fatalf("dave's first send-email: %v, want it held for a person", err)
	}
	r = sink.last()
	if r.Intent != pipeline.IntentRequired || r.AnomalyScore == nil || *r.AnomalyScore < 0.95 || r.Review != ivr.ID {
		t.Fatalf("held call's record %+v (score %v)", r, r.AnomalyScore)
	}
	rv, err := g.Get(ivr.ID)
	if err != nil || rv.Kind != KindConfirm || rv.Anomaly < 0.95 || rv.AnomalyModel != model.Version() {
		t.Fatalf("the confirmation does not say why: %+v %v", rv, err)
	}
	// Sending it again (other params, so no approval applies) does not
	// make the tool look usual: a held call counts in dave's rate, but its
	// tool is not learned.
	if r := sc.History.Peek("dave", "send-email", anomaly.Folders{}, email.At); r.KnownTool || r.LastMinute < 2 {
		t.Fatalf("after the held send-email, dave's history says %+v: want it counted, not learned", r)
	}
	again := email
	again.At, again.Size = again.At.Add(10*time.Second), 280
	var ivr2 *pipeline.IntentVerificationRequired
	if _, err := call(again); !errors.As(err, &ivr2) || ivr2.ID == ivr.ID {
		t.Fatalf("send-email sent again, unapproved: %v, want held under a new confirmation", err)
	}
	if _, err := g.Decide(ivr.ID, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	email.At = email.At.Add(time.Minute)
	if _, err := call(email); err != nil {
		t.Fatalf("approved send-email sent again: %v", err)
	}
	if r := sink.last(); r.Intent != pipeline.IntentApproved {
		t.Fatalf("approved call's record %+v", r)
	}
	// A person's approval is training data: retrained on the log and
	// restarted (the history warmed from the log), dave's send-email is
	// usual for dave; another agent's first send-email still is not.
	buf = buf[:0]
	for _, r := range sink.recs {
		b, _ := json.Marshal(r)
		buf = append(append(buf, b...), '\n')
	}
	os.WriteFile(logPath, buf, 0o600)
	ts2, err := ReadTrainingSet(logPath, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	retrained, err := anomaly.Train(ts2.Calls)
	if err != nil {
		t.Fatal(err)
	}
	var h2 anomaly.Holder
	h2.Set(retrained)
	restarted := NewAnomalyScorer(&h2, pipeline.DefaultAnomalyThresholds.Block)
	if _, err := restarted.WarmHistory(logPath, 20000, 0.95); err != nil {
		t.Fatal(err)
	}
	later := email.At.Add(time.Hour)
	if s, _ := restarted.ScoreCall(pipeline.CallFeatures{Caller: "dave", Tool: "send-email", At: later, ParamSizeBytes: 300}); s >= pipeline.DefaultAnomalyThresholds.Review {
		t.Fatalf("dave's approved send-email after retraining and a restart: %d/255, want below review", s)
	}
	if s, _ := restarted.ScoreCall(pipeline.CallFeatures{Caller: "alice", Tool: "send-email", At: later, ParamSizeBytes: 300}); s < pipeline.DefaultAnomalyThresholds.Review {
		t.Fatalf("alice's first send-email after dave's approval: %d/255, want flagged", s)
	}

	// dave, who reads ~5 files a day, reads 200 in a minute: after the
	// first few the calls are queued for review or held.
	caught := 0
	at := day.Add(11 * time.Hour)
	for i := 0; i < 200; i++ {
		_, err := call(traffic.Call{At: at.Add(time.Duration(i) * 250 * time.Millisecond), Caller: "dave", Tool: "read-file", Size: 70})
		r := sink.last()
		if i == 0 && (err != nil || r.Intent != "") {
			t.Fatalf("dave's first read of the day: %v, intent %q", err, r.Intent)
		}
		if r.Intent == pipeline.IntentQueued || r.Intent == pipeline.IntentRequired {
			caught++
		}
	}
	if caught < 180 {
		t.Fatalf("burst: %d of 200 calls queued or held, want ≥ 180", caught)
	}
}

// Old audit lines (before params_bytes and the anomaly fields) are read
// as calls whose size is unknown (0); records refused before the scorer
// are not seen; denied or still held ones count in the caller's rate (as
// the running airs counts them) but are neither training calls nor teach
// their tool; an approved one is learned.
func TestReadTrainingSetSelects(t *testing.T) {
	p := filepath.Join(t.TempDir(), "audit.jsonl")
	lines := []string{
		`{"seq":1,"prev":"0","time":"2026-01-05T10:00:00Z","call_id":"c1","caller":"a","tool":"read","params_sha256":"x","outcome":"ok","latency_ns":1}`,
		`{"seq":2,"prev":"0","time":"2026-01-05T10:00:10Z","call_id":"c2","caller":"a","tool":"read","params_sha256":"x","outcome":"error","error":"tool_capability_denied","latency_ns":1}`,
		`{"seq":3,"prev":"0","time":"2026-01-05T10:00:20Z","call_id":"c3","caller":"a","tool":"rm","params_sha256":"x","outcome":"error","error":"intent_misaligned","latency_ns":1,"intent":"denied"}`,
		`{"seq":4,"prev":"0","time":"2026-01-05T10:00:30Z","call_id":"c4","caller":"a","tool":"rm","params_sha256":"x","params_bytes":40,"outcome":"error","error":"intent_verification_required","latency_ns":1,"intent":"required","anomaly_score":0.97,"anomaly_model":"m"}`,
		`{"seq":5,"prev":"0","time":"2026-01-05T10:00:35Z","call_id":"c4s","caller":"a","tool":"rm","params_sha256":"x","outcome":"ok","latency_ns":1,"speculative":true}`,
		`{"seq":6,"prev":"0","time":"2026-01-05T10:00:40Z","call_id":"c5","caller":"a","tool":"rm","params_sha256":"x","params_bytes":40,"outcome":"ok","latency_ns":1,"intent":"approved","anomaly_score":0,"anomaly_model":"m"}`,
	}
	os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	ts, err := ReadTrainingSet(p, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Records != 6 || ts.Skipped != 2 || ts.Excluded != 2 || len(ts.Calls) != 2 {
		t.Fatalf("records %d skipped %d excluded %d calls %d", ts.Records, ts.Skipped, ts.Excluded, len(ts.Calls))
	}
	at := time.Date(2026, 1, 5, 10, 0, 40, 0, time.UTC)
	want := anomaly.Features{Caller: "a", Tool: "rm", Unix: at.Unix(), Last10s: 1, Last20s: 2, Last30s: 3, LastMinute: 4, KnownTool: false, ParamSizeBytes: 40}
	if ts.Calls[1] != want || ts.Calls[0].ParamSizeBytes != 0 || ts.Calls[0].KnownTool {
		t.Fatalf("calls %+v", ts.Calls)
	}
}
