package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

func destructiveCall(caller, params string) pipeline.IntentCheck {
	return pipeline.IntentCheck{CallID: "c", Caller: caller, Provider: "builtin",
		Tool: &pipeline.Tool{Name: "delete-file", Destructive: true}, Params: json.RawMessage(params)}
}

func guardOn(t *testing.T, db *DB) *guard.Guard {
	t.Helper()
	g, err := guard.New(guard.Config{Store: db.GuardStore(), ReviewTools: []string{"read-file"}})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A destructive call held on replica A, approved on replica B, runs when
// it is sent again to A (once); an "always" granted on B lets the next
// call through on A; reviews queued on both at once are all kept.
func TestGuardStoreReplicasShareConfirmations(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbA, dbB := openTest(t, dsn), openTest(t, dsn)
	a, b := guardOn(t, dbA), guardOn(t, dbB)
	ctx := context.Background()
	call := destructiveCall("alice", `{"path": "x"}`)
	_, err := a.Gate(ctx, call)
	var req *pipeline.IntentVerificationRequired
	if !errors.As(err, &req) {
		t.Fatalf("replica A: %v, want a confirmation required", err)
	}
	pending, err := b.List(guard.Filter{})
	if err != nil || len(pending) != 1 || pending[0].ID != req.ID {
		t.Fatalf("replica B lists %+v (%v), want A's confirmation %s", pending, err, req.ID)
	}
	if _, err := b.Decide(req.ID, guard.Once, "bob"); err != nil {
		t.Fatal(err)
	}
	d, err := a.Gate(ctx, destructiveCall("alice", `{"path":"x"}`)) // sent again, other white space
	if err != nil || d.Decision != pipeline.IntentApproved || d.Reviewer != "bob" {
		t.Fatalf("replica A after B's approval: %+v, %v; want approved by bob", d, err)
	}
	if _, err := b.Gate(ctx, call); !errors.As(err, &req) {
		t.Fatalf("the approval was used on A, yet B let the call through again: %v", err)
	}
	if _, err := a.Decide(req.ID, guard.Always, "bob"); err != nil {
		t.Fatal(err)
	}
	if d, err := b.Gate(ctx, destructiveCall("alice", `{"path":"other"}`)); err != nil || d.Decision != pipeline.IntentAlways {
		t.Fatalf("replica B after A's always: %+v, %v", d, err)
	}

	// Reviews queued from both replicas at once: read-change-write under
	// the row lock, so none is lost.
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		for _, g := range []*guard.Guard{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := pipeline.IntentCheck{Caller: "carol", Provider: "builtin", Tool: &pipeline.Tool{Name: "read-file"},
					Params: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
				if d, _ := g.Gate(ctx, c); d.Decision != pipeline.IntentQueued {
					t.Errorf("review %d not queued: %+v", i, d)
				}
			}()
		}
	}
	wg.Wait()
	all, err := a.List(guard.Filter{Caller: "carol"})
	if err != nil || len(all) != 2*n {
		t.Fatalf("%d reviews kept (%v), want %d", len(all), err, 2*n)
	}
	if a.Dropped()+b.Dropped() != 0 {
		t.Fatalf("dropped %d reviews", a.Dropped()+b.Dropped())
	}
}

// A model stored once is what every replica's store returns, by version.
func TestAnomalyModelsSharedByVersion(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openTest(t, dsn).AnomalyModels(), openTest(t, dsn).AnomalyModels()
	ctx := context.Background()
	if v, err := b.ModelVersion(ctx, guard.SlotModel); err != nil || v != "" {
		t.Fatalf("empty store: version %q, %v", v, err)
	}
	if _, _, err := b.LoadModel(ctx, guard.SlotModel); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadModel on an empty slot: %v, want fs.ErrNotExist", err)
	}
	for _, v := range []string{"v1", "v2"} {
		if err := a.SaveModel(ctx, guard.SlotModel, v, []byte(`{"model":"`+v+`"}`)); err != nil {
			t.Fatal(err)
		}
		got, m, err := b.LoadModel(ctx, guard.SlotModel)
		if err != nil || got != v || string(m) != `{"model":"`+v+`"}` {
			t.Fatalf("replica B loads %q %s (%v), want %s", got, m, err, v)
		}
	}
	if v, _ := b.ModelVersion(ctx, guard.SlotCandidate); v != "" {
		t.Fatalf("candidate slot %q, want none", v)
	}
}
