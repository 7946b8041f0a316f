package guard

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Changes go to the journal; past its size it is compacted into the
// snapshot; another process following the store sees every change across
// compactions.
func TestStoreJournalCompacts(t *testing.T) {
	old := compactAt
	compactAt = 16 << 10
	defer func() { compactAt = old }()
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	a, b := newGuard(t, dir, clk), newGuard(t, dir, clk)
	a.cfg.MaxPendingPerAgent, b.cfg.MaxPendingPerAgent = 1000, 1000
	compacted := false
	var ids []string
	for i := range 200 {
		g := a
		if i%3 == 0 {
			g = b
		}
		ids = append(ids, held(t, g, check(fmt.Sprint("agent", i%7), deleteFile, fmt.Sprintf(`{"path":"f%d"}`, i))))
		if fi, err := os.Stat(filepath.Join(dir, journalName)); err == nil && fi.Size() < 4<<10 && i > 50 {
			compacted = true
		}
		if fi, err := os.Stat(filepath.Join(dir, journalName)); err == nil && fi.Size() > 2*compactAt {
			t.Fatalf("journal %d bytes after %d changes: not compacted", fi.Size(), i)
		}
	}
	if !compacted {
		t.Fatal("the journal was never compacted")
	}
	if _, err := b.Decide(ids[10], Deny, "boss"); err != nil {
		t.Fatal(err)
	}
	for _, g := range []*Guard{a, b, newGuard(t, dir, clk)} {
		open, err := g.List(Filter{})
		if err != nil || len(open) != 199 {
			t.Fatalf("%d open reviews (%v), want 199", len(open), err)
		}
		if r, err := g.Get(ids[10]); err != nil || r.Status != StatusDenied {
			t.Fatalf("denied review: %+v %v", r, err)
		}
	}
}

// One agent's open confirmations are bounded: past the bound a call that
// would be held is refused, saying why and what to do, while other agents
// are held as before; once they expire they are dropped from the store.
func TestPendingBoundedPerAgent(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	g, err := New(Config{Dir: dir, Expiry: 10 * time.Minute, MaxPendingPerAgent: 3, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		held(t, g, check("flood", deleteFile, fmt.Sprintf(`{"path":"%d"}`, i)))
	}
	_, err = g.Gate(context.Background(), check("flood", deleteFile, `{"path":"x"}`))
	if !errors.Is(err, pipeline.ErrIntentMisaligned) || !strings.Contains(err.Error(), "3 confirmations waiting") || !strings.Contains(err.Error(), "airs review") {
		t.Fatalf("past the bound: %v, want refused with why and what to do", err)
	}
	held(t, g, check("other", deleteFile, `{"path":"x"}`))
	// The same call again is still the same confirmation, not refused.
	held(t, g, check("flood", deleteFile, `{"path":"0"}`))
	clk.advance(11 * time.Minute)
	held(t, g, check("flood", deleteFile, `{"path":"x"}`))
	all, err := newGuard(t, dir, clk).List(Filter{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Status == StatusExpired {
			t.Fatalf("an expired confirmation is kept: %+v", r)
		}
	}
	if len(all) != 1 {
		t.Fatalf("%d reviews kept, want the one new confirmation", len(all))
	}
}

// An "always" grant answers the intent question; a call the anomaly gate
// holds is held with one too.
func TestGrantDoesNotCoverAnomalies(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	id := held(t, g, check("bot", deleteFile, `{"path":"a"}`))
	if _, err := g.Decide(id, Always, "boss"); err != nil {
		t.Fatal(err)
	}
	passes(t, g, check("bot", deleteFile, `{"path":"b"}`), pipeline.IntentAlways)
	c := check("bot", deleteFile, `{"path":"hr/passwords.txt"}`)
	c.Anomaly, c.AnomalyScore, c.AnomalyModel = pipeline.AnomalyBlock, 250, "m"
	id2 := held(t, g, c)
	r := c
	r.Tool = readFile // a read-only tool held for its score alone
	held(t, g, r)
	if _, err := g.Decide(id2, Once, "boss"); err != nil {
		t.Fatal(err)
	}
	passes(t, g, c, pipeline.IntentApproved)
}

func TestListPages(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g := newGuard(t, t.TempDir(), clk)
	var ids []string
	for i := range 7 {
		ids = append(ids, held(t, g, check("bot", deleteFile, fmt.Sprintf(`{"path":"%d"}`, i))))
		clk.advance(time.Second)
	}
	var got []string
	for off := 0; ; off += 3 {
		page, err := g.List(Filter{Offset: off, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 3 {
			t.Fatalf("page of %d, limit 3", len(page))
		}
		for _, r := range page {
			got = append(got, r.ID)
		}
		if len(page) < 3 {
			break
		}
	}
	if len(got) != 7 || got[0] != ids[6] || got[6] != ids[0] {
		t.Fatalf("pages %v, want all 7 newest first", got)
	}
}

// BenchmarkHeldCall is one held call's cost in the file store with n
// reviews already in it: a journal append, not a rewrite of the store.
func BenchmarkHeldCall(b *testing.B) {
	for _, n := range []int{0, 5000} {
		b.Run(fmt.Sprint("store=", n), func(b *testing.B) {
			g, err := New(Config{Dir: b.TempDir(), MaxPendingPerAgent: 1 << 30})
			if err != nil {
				b.Fatal(err)
			}
			for i := range n {
				g.Gate(context.Background(), check(fmt.Sprint("a", i%50), deleteFile, fmt.Sprintf(`{"path":"old%d"}`, i)))
			}
			i := 0
			for b.Loop() {
				g.Gate(context.Background(), check("bot", deleteFile, fmt.Sprintf(`{"path":"new%d"}`, i)))
				i++
			}
		})
	}
}
