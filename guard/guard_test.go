package guard

import (
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

	"github.com/airs-dev/airs/pipeline"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newGuard(t *testing.T, dir string, clk *clock, review ...string) *Guard {
	t.Helper()
	g, err := New(Config{Dir: dir, ReviewTools: review, Reviewers: []string{"boss"}, Expiry: 10 * time.Minute, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

var (
	deleteFile = &pipeline.Tool{Name: "delete-file", Destructive: true}
	readFile   = &pipeline.Tool{Name: "read-file", ReadOnly: true, Idempotent: true}
	calculator = &pipeline.Tool{Name: "calculator", ReadOnly: true, Idempotent: true}
)

func check(caller string, tool *pipeline.Tool, params string) pipeline.IntentCheck {
	return pipeline.IntentCheck{CallID: "c", Caller: caller, Provider: "builtin", Tool: tool, Params: json.RawMessage(params)}
}

// held asserts the call is held and returns its confirmation id.
func held(t *testing.T, g *Guard, c pipeline.IntentCheck) string {
	t.Helper()
	d, err := g.Gate(context.Background(), c)
	var ivr *pipeline.IntentVerificationRequired
	if !errors.As(err, &ivr) || ivr.ID == "" || d.Decision != pipeline.IntentRequired || d.Review != ivr.ID {
		t.Fatalf("%s %s: %+v %v, want held", c.Caller, c.Params, d, err)
	}
	return ivr.ID
}

func passes(t *testing.T, g *Guard, c pipeline.IntentCheck, decision string) pipeline.IntentDecision {
	t.Helper()
	d, err := g.Gate(context.Background(), c)
	if err != nil || d.Decision != decision {
		t.Fatalf("%s %s: %+v %v, want it through as %q", c.Caller, c.Params, d, err, decision)
	}
	return d
}

// A destructive call is held; the same call again is the same confirmation;
// approved once, exactly that call (caller, tool, params) runs once.
func TestConfirmOnce(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	call := check("bot", deleteFile, `{"space":"documents","path":"a.txt"}`)
	id := held(t, g, call)
	if again := held(t, g, check("bot", deleteFile, `{ "space": "documents", "path": "a.txt" }`)); again != id {
		t.Fatalf("the same call (other white space) asked again: %s then %s", id, again)
	}
	if open, _ := g.List(Filter{}); len(open) != 1 || open[0].ID != id || open[0].Status != StatusPending || string(open[0].Params) != `{"space":"documents","path":"a.txt"}` {
		t.Fatalf("open: %+v", open)
	}
	r, err := g.Decide(id, Once, "boss")
	if err != nil || r.Status != StatusApproved {
		t.Fatalf("approve: %+v %v", r, err)
	}
	if _, err := g.Decide(id, Deny, "boss"); !errors.Is(err, ErrDecided) {
		t.Fatalf("a second decision: %v", err)
	}
	// Another agent, other params: not what was approved.
	held(t, g, check("other", deleteFile, `{"space":"documents","path":"a.txt"}`))
	held(t, g, check("bot", deleteFile, `{"space":"documents","path":"b.txt"}`))
	d := passes(t, g, call, pipeline.IntentApproved)
	if d.Review != id || d.Reviewer != "boss" {
		t.Fatalf("decision %+v", d)
	}
	// Once means once.
	if next := held(t, g, call); next == id {
		t.Fatal("the used confirmation was reused")
	}
}

func TestConfirmAlwaysAndRevoke(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	id := held(t, g, check("bot", deleteFile, `{"path":"a"}`))
	if _, err := g.Decide(id, Always, "boss"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		d := passes(t, g, check("bot", deleteFile, fmt.Sprintf(`{"path":"%d"}`, i)), pipeline.IntentAlways)
		if d.Review != id || d.Reviewer != "boss" {
			t.Fatalf("decision %+v", d)
		}
	}
	clk.advance(48 * time.Hour) // a grant does not expire
	passes(t, g, check("bot", deleteFile, `{"path":"later"}`), pipeline.IntentAlways)
	held(t, g, check("someone-else", deleteFile, `{"path":"a"}`))
	if !g.Granted("bot", "delete-file") || g.Granted("bot", "other-tool") {
		t.Fatal("Granted")
	}
	if ok, err := g.Revoke("bot", "delete-file"); !ok || err != nil {
		t.Fatalf("revoke: %v %v", ok, err)
	}
	held(t, g, check("bot", deleteFile, `{"path":"a"}`))
}

// A denial lands on the same call sent again (refused, audited as denied),
// once; a confirmation nobody decides expires.
func TestDenyAndExpiry(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	call := check("bot", deleteFile, `{"path":"a"}`)
	id := held(t, g, call)
	if _, err := g.Decide(id, Deny, "boss"); err != nil {
		t.Fatal(err)
	}
	d, err := g.Gate(context.Background(), call)
	if !errors.Is(err, pipeline.ErrIntentMisaligned) || d.Decision != pipeline.IntentDenied || d.Review != id || d.Reviewer != "boss" || !strings.Contains(err.Error(), "boss denied") {
		t.Fatalf("after deny: %+v %v", d, err)
	}
	if h := pipeline.Hint(err); !strings.Contains(h, "boss") || !strings.Contains(h, "refused") {
		t.Errorf("a denial's hint: %q", h)
	}
	second := held(t, g, call) // the denial is used; asking again is a new question
	clk.advance(10 * time.Minute)
	if open, _ := g.List(Filter{}); len(open) != 0 {
		t.Fatalf("an expired confirmation is open: %+v", open)
	}
	all, _ := g.List(Filter{All: true})
	if len(all) != 2 || all[0].ID != second || all[0].Status != StatusExpired {
		t.Fatalf("all: %+v", all)
	}
	if _, err := g.Decide(second, Once, "boss"); !errors.Is(err, ErrExpired) {
		t.Fatalf("approving an expired confirmation: %v", err)
	}
	third := held(t, g, call)
	if third == second {
		t.Fatal("an expired confirmation was reused")
	}
	// An approval not used in time expires too.
	if _, err := g.Decide(third, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	clk.advance(11 * time.Minute)
	held(t, g, call)
	if _, err := g.Decide("cf-nope", Once, "boss"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	// A week on, the old ones are pruned at the next change.
	clk.advance(8 * 24 * time.Hour)
	held(t, g, call)
	if all := mustList(t, g); len(all) != 1 || all[0].Status != StatusPending {
		t.Errorf("after a week, %d reviews kept (want only the new one): %+v", len(all), all)
	}
}

func mustList(t *testing.T, g *Guard) []Review {
	t.Helper()
	all, err := g.List(Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// A reviewed read-only tool goes ahead and is queued; other read-only tools
// pass without touching the store.
func TestReviewAfterTheFact(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	g := newGuard(t, dir, clk, "read-file")
	passes(t, g, check("bot", calculator, `{"expression":"1+1"}`), "")
	if _, err := os.Stat(filepath.Join(dir, storeName)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an unreviewed call wrote the store: %v", err)
	}
	d := passes(t, g, check("bot", readFile, `{"space":"documents","path":"secret.txt"}`), pipeline.IntentQueued)
	open, _ := g.List(Filter{})
	if len(open) != 1 || open[0].ID != d.Review || open[0].Kind != KindReview || !open[0].Expires.IsZero() {
		t.Fatalf("open: %+v", open)
	}
	if _, err := g.Decide(d.Review, Always, "boss"); err == nil {
		t.Fatal("always on a review after the fact")
	}
	if r, err := g.Decide(d.Review, Deny, "boss"); err != nil || r.Status != StatusDenied {
		t.Fatalf("flag: %+v %v", r, err)
	}
	clk.advance(30 * 24 * time.Hour / 30) // a day: reviews after the fact do not expire
	passes(t, g, check("bot", readFile, `{}`), pipeline.IntentQueued)
	if open, _ := g.List(Filter{Caller: "bot"}); len(open) != 1 {
		t.Fatalf("open: %+v", open)
	}
	if open, _ := g.List(Filter{Caller: "other"}); len(open) != 0 {
		t.Fatalf("other's: %+v", open)
	}
}

func TestQueueBounded(t *testing.T) {
	g, err := New(Config{Dir: t.TempDir(), ReviewTools: []string{"read-file"}, MaxPending: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		g.Gate(context.Background(), check("bot", readFile, `{}`))
	}
	if open, _ := g.List(Filter{}); len(open) != 2 || g.Dropped() != 1 {
		t.Fatalf("%d open, %d dropped", len(open), g.Dropped())
	}
}

// The store is shared by processes (here two Guards over one directory):
// what one decides, the other sees; concurrent changes are not lost.
func TestStoreShared(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	serve, cli := newGuard(t, dir, clk), newGuard(t, dir, clk)
	call := check("bot", deleteFile, `{"path":"a"}`)
	id := held(t, serve, call)
	if _, err := cli.Decide(id, Once, "cli:alice"); err != nil {
		t.Fatal(err)
	}
	passes(t, serve, call, pipeline.IntentApproved)

	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := serve
			if i%2 == 1 {
				g = cli
			}
			if _, err := g.Answer(fmt.Sprintf("agent%d", i), "builtin", "delete-file", json.RawMessage(`{}`), "", Always, "boss"); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	grants, err := newGuard(t, dir, clk).Grants()
	if err != nil || len(grants) != 16 {
		t.Fatalf("%d grants (%v), want 16: a concurrent change was lost", len(grants), err)
	}
}

// A crash half-way through a journal append leaves a torn line that is
// ignored and cut off by the next change; a crash between writing a new
// snapshot and renaming it leaves the old one whole; a store that is not
// one is reported, and a destructive call is then refused (fail closed)
// while a reviewed read goes ahead.
func TestStoreCrashSafe(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	g := newGuard(t, dir, clk, "read-file")
	id := held(t, g, check("bot", deleteFile, `{"path":"a"}`))
	g.crashMidAppend = func() bool { return true }
	if _, err := g.Decide(id, Always, "boss"); err == nil {
		t.Fatal("the simulated crash did not fail the write")
	}
	g.crashMidAppend = nil
	g2 := newGuard(t, dir, clk)
	r, err := g2.Get(id)
	if err != nil || r.Status != StatusPending {
		t.Fatalf("after the crash: %+v %v", r, err)
	}
	if gr, _ := g2.Grants(); len(gr) != 0 {
		t.Fatalf("a grant from the crashed write: %+v", gr)
	}
	if _, err := g2.Decide(id, Once, "boss"); err != nil { // appends over the torn line
		t.Fatal(err)
	}
	if r, err := newGuard(t, dir, clk).Get(id); err != nil || r.Status != StatusApproved {
		t.Fatalf("after a change over the torn line: %+v %v", r, err)
	}
	id2 := held(t, g2, check("bot", deleteFile, `{"path":"b"}`))
	g2.crashBeforeRename = func() bool { return true }
	if err := g2.withState(func(st *state) (bool, error) { return true, g2.compact(st) }); err == nil {
		t.Fatal("the simulated crash did not fail the compaction")
	}
	if r, err := newGuard(t, dir, clk).Get(id2); err != nil || r.Status != StatusPending {
		t.Fatalf("after a crashed compaction: %+v %v", r, err)
	}

	os.WriteFile(filepath.Join(dir, storeName), []byte(`{"version":1,"reviews":[`), 0o600)
	if _, err := New(Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "not a review store") {
		t.Fatalf("New over a torn store: %v", err)
	}
	g.crashBeforeRename = nil
	if _, err := g.Gate(context.Background(), check("bot", deleteFile, `{"path":"a"}`)); !errors.Is(err, pipeline.ErrIntentMisaligned) {
		t.Fatalf("destructive call with a broken store: %v, want refused", err)
	}
	if d, err := g.Gate(context.Background(), check("bot", readFile, `{}`)); err != nil || d.Decision != "" || g.Dropped() != 1 {
		t.Fatalf("reviewed read with a broken store: %+v %v dropped %d", d, err, g.Dropped())
	}
}
