package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/store/pg/pgtest"
)

// Three replicas (three pools on one database) race to claim the same ids:
// each id is claimed exactly once, and a claim survives its replica.
func TestClaimsAcrossReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	dbs := []*DB{openTest(t, dsn), openTest(t, dsn), openTest(t, dsn)}
	ctx := context.Background()
	const ids = 50
	var won [ids]atomic.Int64
	var wg sync.WaitGroup
	for r, db := range dbs {
		for g := range 4 {
			wg.Go(func() {
				for i := range ids {
					earlier, err := db.Claims().Claim(ctx, fmt.Sprintf("call-%d", i), fmt.Sprintf("replica-%d-%d", r, g), "pay")
					if err != nil {
						t.Error(err)
						return
					}
					if earlier == nil {
						won[i].Add(1)
					}
				}
			})
		}
	}
	wg.Wait()
	for i := range ids {
		if n := won[i].Load(); n != 1 {
			t.Fatalf("call-%d claimed %d times, want exactly once", i, n)
		}
	}
	dbs[0].Close()
	late := openTest(t, dsn)
	if earlier, err := late.Claims().Claim(ctx, "call-0", "late", "pay"); err != nil || earlier == nil || earlier.Tool != "pay" {
		t.Fatalf("a claim made before a restart: claimed again (%+v, %v)", earlier, err)
	}
	if earlier, err := late.Claims().Claim(ctx, "call-new", "late", "pay"); err != nil || earlier != nil {
		t.Fatalf("a new id: %+v (%v)", earlier, err)
	}
}

// The first attempt's outcome, recorded by one replica, is what a retry on
// another one gets back, its output byte for byte; pruning drops old
// claims (and the id can be claimed again).
func TestClaimsOutcomeAcrossReplicas(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := openTest(t, dsn), openTest(t, dsn)
	ctx := context.Background()
	if earlier, err := a.Claims().Claim(ctx, "pay-1", "alice", "pay"); err != nil || earlier != nil {
		t.Fatalf("first claim: %+v %v", earlier, err)
	}
	// Running: the claim has no outcome yet.
	earlier, err := b.Claims().Claim(ctx, "pay-1", "alice", "pay")
	if err != nil || earlier == nil || earlier.Outcome != nil || earlier.Caller != "alice" || time.Since(earlier.ClaimedAt) > time.Minute {
		t.Fatalf("while running: %+v %v", earlier, err)
	}
	out := json.RawMessage(`{"z": 1,  "a":[2, 3]}`) // jsonb would reorder and respace it
	if err := a.Claims().Finish(ctx, "pay-1", pipeline.ClaimOutcome{Outcome: pipeline.OutcomeOK, Output: out, Provider: "bank", Version: "1.0.0"}); err != nil {
		t.Fatal(err)
	}
	earlier, err = b.Claims().Claim(ctx, "pay-1", "alice", "pay")
	if err != nil || earlier == nil || earlier.Outcome == nil || string(earlier.Outcome.Output) != string(out) || earlier.Outcome.Provider != "bank" {
		t.Fatalf("after it ended: %+v %v", earlier, err)
	}
	// An error outcome keeps its kind.
	if _, err := a.Claims().Claim(ctx, "pay-2", "alice", "pay"); err != nil {
		t.Fatal(err)
	}
	if err := a.Claims().Finish(ctx, "pay-2", pipeline.ClaimOutcome{Outcome: pipeline.OutcomeError, ErrorKind: pipeline.KindProviderRejected, Error: "rejected (x): no"}); err != nil {
		t.Fatal(err)
	}
	if earlier, err := b.Claims().Claim(ctx, "pay-2", "bob", "pay"); err != nil || earlier.Outcome == nil || earlier.Outcome.ErrorKind != pipeline.KindProviderRejected || earlier.Caller != "alice" {
		t.Fatalf("error outcome: %+v %v", earlier, err)
	}
	if err := a.Claims().Finish(ctx, "nobody-claimed-this", pipeline.ClaimOutcome{Outcome: pipeline.OutcomeOK}); err == nil {
		t.Error("Finish of an unclaimed id: no error")
	}
	// Prune: everything claimed before now+1s goes.
	n, err := b.Claims().Prune(ctx, time.Now().Add(time.Second))
	if err != nil || n < 2 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if earlier, err := a.Claims().Claim(ctx, "pay-1", "alice", "pay"); err != nil || earlier != nil {
		t.Fatalf("after pruning: %+v %v; want a fresh claim", earlier, err)
	}
	// The retention prune on Claim's path: a 1 ms retention drops pay-1.
	time.Sleep(5 * time.Millisecond)
	short := a.Claims()
	short.Retention = time.Millisecond
	if earlier, err := short.Claim(ctx, "pay-9", "alice", "pay"); err != nil || earlier != nil {
		t.Fatalf("claim with a short retention: %+v %v", earlier, err)
	}
	if earlier, err := b.Claims().Claim(ctx, "pay-1", "alice", "pay"); err != nil || earlier != nil {
		t.Fatalf("pay-1 past the retention: %+v %v; want it pruned", earlier, err)
	}
}
