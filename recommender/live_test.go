package recommender

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type world struct {
	reg   *pipeline.Registry
	m     *pipeline.Manager
	cat   *selector.RegistryCatalog
	clock *clock
	home  string
	docs  string
}

// newWorld registers the real built-in tools over one space, documents,
// that alice may read and bob may not.
func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{reg: pipeline.NewRegistry(pipeline.RegistryConfig{}), clock: &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)},
		home: t.TempDir(), docs: t.TempDir()}
	pol := &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "documents"}}},
	}
	if err := builtin.Register(w.reg, builtin.Options{Spaces: map[string]string{"documents": w.docs}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: w.reg, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	w.m = m
	w.cat = &selector.RegistryCatalog{Registry: w.reg, Policy: pol}
	return w
}

func (w *world) recommender(t *testing.T) *Recommender {
	t.Helper()
	r, err := New(Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"}, Home: w.home, Now: w.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func find(recs []Recommendation, tool string) *Recommendation {
	for i := range recs {
		if recs[i].Tool == tool {
			return &recs[i]
		}
	}
	return nil
}

func TestPDFInSpaceRecommendsPDFExtract(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	r.ObserveFile(FileEvent{Space: "documents", Rel: "papers/attention.pdf", Op: "create"})
	rec := find(r.List("alice"), "pdf-extract")
	if rec == nil {
		t.Fatalf("no pdf-extract recommendation: %+v", r.List("alice"))
	}
	var args map[string]any
	if err := json.Unmarshal(rec.Arguments, &args); err != nil || args["space"] != "documents" || args["path"] != "papers/attention.pdf" {
		t.Fatalf("arguments %s", rec.Arguments)
	}
	if rec.Urgency != UrgencyLow || rec.Signals[0].Signal != "space" || !strings.Contains(rec.Reason, "attention.pdf") {
		t.Fatalf("recommendation %+v", rec)
	}
	if err := w.m.Validate(pipeline.Tool{Name: rec.Tool}, rec.Arguments); err != nil {
		t.Fatalf("prefilled arguments fail the schema stage: %v", err)
	}
	if !rec.Expires.After(rec.Created) {
		t.Fatalf("no expiry: %+v", rec)
	}
}

// bob holds no ReadSpace(documents): the space tools are not his to call,
// so a PDF there is never recommended to him.
func TestNeverRecommendsWhatTheCallerCannotCall(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("bob")
	r.Known("alice")
	r.ObserveFile(FileEvent{Space: "documents", Rel: "a.pdf", Op: "create"})
	_ = r.SetTask("bob", "extract the text of the pdf report a.pdf in documents")
	for _, rec := range r.List("bob") {
		for _, e := range w.cat.Callable("bob") {
			if e.Tool.Name == rec.Tool {
				goto ok
			}
		}
		t.Fatalf("bob got %s, which he cannot call", rec.Tool)
	ok:
	}
	if find(r.List("bob"), "pdf-extract") != nil {
		t.Fatal("bob got pdf-extract")
	}
	if find(r.List("alice"), "pdf-extract") == nil {
		t.Fatal("alice, who may, got nothing: the test proves nothing")
	}
}

func TestRepeatedDismissalsSuppressInThatContext(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	for i := range 3 {
		r.ObserveFile(FileEvent{Space: "documents", Rel: "r" + string(rune('a'+i)) + ".pdf", Op: "create"})
		rec := find(r.List("alice"), "pdf-extract")
		if rec == nil {
			t.Fatalf("round %d: no pdf-extract", i)
		}
		if err := r.Dismiss("alice", rec.ID); err != nil {
			t.Fatal(err)
		}
		w.clock.Advance(2 * time.Hour) // past the cool-down
	}
	r.ObserveFile(FileEvent{Space: "documents", Rel: "later.pdf", Op: "create"})
	if rec := find(r.List("alice"), "pdf-extract"); rec != nil {
		t.Fatalf("pdf-extract still recommended for PDFs after 3 dismissals: %+v", rec)
	}
	r.ObserveFile(FileEvent{Space: "documents", Rel: "notes.txt", Op: "create"})
	if find(r.List("alice"), "read-file") == nil && find(r.List("alice"), "summarize") == nil {
		t.Fatalf("nothing recommended for a text file: %+v", r.List("alice"))
	}
}

func TestDismissalCooldown(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	r.ObserveFile(FileEvent{Space: "documents", Rel: "a.pdf", Op: "create"})
	rec := find(r.List("alice"), "pdf-extract")
	if rec == nil {
		t.Fatal("no pdf-extract")
	}
	if err := r.Dismiss("alice", rec.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Dismiss("alice", rec.ID); err != ErrNotFound {
		t.Fatalf("second dismiss: %v", err)
	}
	r.ObserveFile(FileEvent{Space: "documents", Rel: "b.pdf", Op: "create"})
	if find(r.List("alice"), "pdf-extract") != nil {
		t.Fatal("recommended again within the cool-down")
	}
	w.clock.Advance(61 * time.Minute)
	r.ObserveFile(FileEvent{Space: "documents", Rel: "c.pdf", Op: "create"})
	if find(r.List("alice"), "pdf-extract") == nil {
		t.Fatal("not recommended after the cool-down")
	}
}

func TestIgnoredWhenExpiredUnseen(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	ch, cancel := r.Subscribe("alice")
	defer cancel()
	r.ObserveFile(FileEvent{Space: "documents", Rel: "a.pdf", Op: "create"})
	if u := <-ch; u.Type != "new" || u.Recommendation.Tool != "pdf-extract" {
		t.Fatalf("update %+v", u)
	}
	issued := r.Stats().Issued
	w.clock.Advance(11 * time.Minute)
	r.Sweep()
	for u := range ch {
		if u.Type == "expired" && u.Recommendation.Tool == "pdf-extract" {
			break
		}
	}
	if s := r.Stats(); s.Ignored != issued {
		t.Fatalf("stats %+v", s)
	}
	b, err := os.ReadFile(filepath.Join(w.home, "recommender", "feedback.jsonl"))
	if err != nil || !strings.Contains(string(b), `"outcome":"ignored"`) || !strings.Contains(string(b), `"tool":"pdf-extract"`) {
		t.Fatalf("feedback log %q, %v", b, err)
	}
}

func TestRestartKeepsWhatWasLearned(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	for i := range 3 {
		r.ObserveFile(FileEvent{Space: "documents", Rel: "x" + string(rune('a'+i)) + ".pdf", Op: "create"})
		rec := find(r.List("alice"), "pdf-extract")
		if rec == nil {
			t.Fatalf("round %d: nothing", i)
		}
		_ = r.Dismiss("alice", rec.ID)
		w.clock.Advance(2 * time.Hour)
	}
	bias := r.fusion.ToolBias("pdf-extract")
	if bias >= 0 {
		t.Fatalf("dismissals taught nothing: bias %v", bias)
	}
	// No Close: a crash. The feedback log alone must carry it.
	r2 := w.recommender(t)
	if got := r2.fusion.ToolBias("pdf-extract"); got != bias {
		t.Fatalf("after restart bias %v, want %v", got, bias)
	}
	r2.Known("alice")
	r2.ObserveFile(FileEvent{Space: "documents", Rel: "y.pdf", Op: "create"})
	if find(r2.List("alice"), "pdf-extract") != nil {
		t.Fatal("suppression lost in the restart")
	}
	// A snapshot, then a third start: the same again, from the snapshot.
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	r3 := w.recommender(t)
	if got := r3.fusion.ToolBias("pdf-extract"); got != bias {
		t.Fatalf("after snapshot bias %v, want %v", got, bias)
	}
}

func TestRateLimitAndDedup(t *testing.T) {
	w := newWorld(t)
	r, err := New(Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"}, Now: w.clock.Now, PerMinute: 2, MaxActive: 10})
	if err != nil {
		t.Fatal(err)
	}
	r.Known("alice")
	for i := range 5 {
		r.ObserveFile(FileEvent{Space: "documents", Rel: "f" + string(rune('a'+i)) + ".pdf", Op: "create"})
	}
	r.ObserveFile(FileEvent{Space: "documents", Rel: "fe.pdf", Op: "write"})
	if n := len(r.List("alice")); n != 2 {
		t.Fatalf("%d recommendations in a minute, want 2 (the limit)", n)
	}
	if r.Stats().RateLimited == 0 {
		t.Fatal("rate limit not counted")
	}
	w.clock.Advance(time.Minute)
	r.ObserveFile(FileEvent{Space: "documents", Rel: "fe.pdf", Op: "write"})
	recs := r.List("alice")
	seen := map[string]bool{}
	for _, rec := range recs {
		k := rec.Tool + string(rec.Arguments)
		if seen[k] {
			t.Fatalf("duplicate %s", k)
		}
		seen[k] = true
	}
}

func TestRecentCallsAndTask(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	_ = r.SetTask("alice", "list the files in documents")
	if find(r.List("alice"), "list-files") == nil {
		t.Fatalf("task gave %+v", r.List("alice"))
	}
	sub := w.m.Subscribe(0)
	defer sub.Close()
	w.docsFile(t, "q.pdf")
	res, err := w.m.Call(t.Context(), pipeline.Request{Tool: "list-files", Params: []byte(`{"space":"documents"}`), Caller: "alice"})
	if err != nil {
		t.Fatal(err, res)
	}
	r.ObserveCall(<-sub.C)
	if rec := find(r.List("alice"), "list-files"); rec != nil && string(rec.Arguments) == `{"space":"documents"}` {
		t.Fatal("the call just made is still recommended")
	}
}

func (w *world) docsFile(t *testing.T, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.docs, name), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A task set by one process reaches another's recommender at its sweep.
func TestTaskFromAnotherProcess(t *testing.T) {
	w := newWorld(t)
	serve := w.recommender(t)
	serve.Known("alice")
	cli := w.recommender(t)
	if err := cli.SetTask("alice", "list the files in documents"); err != nil {
		t.Fatal(err)
	}
	if find(serve.List("alice"), "list-files") != nil {
		t.Fatal("seen before the sweep: the test proves nothing")
	}
	serve.Sweep()
	if serve.Task("alice") != "list the files in documents" || find(serve.List("alice"), "list-files") == nil {
		t.Fatalf("task %q, recommendations %+v", serve.Task("alice"), serve.List("alice"))
	}
	if err := cli.SetTask("alice", strings.Repeat("x", MaxTaskBytes+1)); err == nil {
		t.Fatal("an over-long task was taken")
	}
}

// read-file's description sends PDFs to pdf-extract: a PDF is pdf-extract's
// (space score 1), read-file's only as a file (0.4).
func TestFileKindFromDescription(t *testing.T) {
	w := newWorld(t)
	files := []FileEvent{{Space: "documents", Rel: "a.pdf"}}
	r := w.recommender(t)
	for _, e := range w.cat.Callable("alice") {
		got, _ := fileScore(e.Tool, r.info(e.Tool), files)
		want := map[string]float64{"pdf-extract": 1, "read-file": 0.4}[e.Tool.Name]
		if _, ok := map[string]bool{"pdf-extract": true, "read-file": true}[e.Tool.Name]; ok && got != want {
			t.Errorf("%s on a PDF: %v, want %v", e.Tool.Name, got, want)
		}
	}
	txt := []FileEvent{{Space: "documents", Rel: "notes.md"}}
	for _, e := range w.cat.Callable("alice") {
		if e.Tool.Name == "read-file" {
			if got, _ := fileScore(e.Tool, r.info(e.Tool), txt); got != 1 {
				t.Errorf("read-file on Markdown: %v, want 1", got)
			}
		}
	}
}

// A subscriber that stops reading is cut off (its channel closes) and
// never holds the others back.
func TestStalledSubscriberIsCutOff(t *testing.T) {
	w := newWorld(t)
	r, err := New(Config{Catalog: w.cat, Validate: w.m.Validate, Spaces: []string{"documents"}, Now: w.clock.Now, PerMinute: 1 << 20, MaxActive: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	r.Known("alice")
	stalled, cancelStalled := r.Subscribe("alice")
	defer cancelStalled()
	live, cancelLive := r.Subscribe("alice")
	defer cancelLive()
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		for range live {
			got.Add(1)
		}
		close(done)
	}()
	for i := range subBuffer * 3 {
		r.ObserveFile(FileEvent{Space: "documents", Rel: "f" + strconv.Itoa(i) + ".pdf", Op: "create"})
		for deadline := time.Now().Add(5 * time.Second); got.Load() < int64(r.Stats().Issued); { // a reader that keeps up
			if time.Now().After(deadline) {
				t.Fatal("the reading subscriber fell behind")
			}
			time.Sleep(100 * time.Microsecond)
		}
	}
	n := 0
	for range stalled {
		n++
	}
	if n != subBuffer {
		t.Fatalf("the stalled subscriber got %d before being cut off, want its buffer (%d)", n, subBuffer)
	}
	cancelLive()
	<-done
	if issued := int64(r.Stats().Issued); got.Load() < issued {
		t.Fatalf("the reading subscriber got %d of %d updates", got.Load(), issued)
	}
	if r.Stats().SubscriberDrops != 1 {
		t.Fatalf("drops %d", r.Stats().SubscriberDrops)
	}
}

// "Extract the text of a PDF" names PDFs, not text files: pdf-extract is no
// tool for notes.txt, read-file ("plain text, Markdown, …") is.
func TestTextFileIsNotPDFExtracts(t *testing.T) {
	w := newWorld(t)
	r := w.recommender(t)
	r.Known("alice")
	w.docsFile(t, "notes.txt")
	r.ObserveFile(FileEvent{Space: "documents", Rel: "notes.txt", Op: "open"})
	if find(r.List("alice"), "pdf-extract") != nil {
		t.Fatalf("pdf-extract for a text file: %+v", r.List("alice"))
	}
	if find(r.List("alice"), "read-file") == nil {
		t.Fatalf("no read-file for a text file: %+v", r.List("alice"))
	}
}
