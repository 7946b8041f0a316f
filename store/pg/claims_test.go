package pg

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// Three replicas (three pools on one database) race to claim the same ids:
// each id is claimed exactly once, and a claim survives its replica.
func TestClaimsAcrossReplicas(t *testing.T) {
	dsn := testDSN(t)
	dbs := []*DB{openTest(t, dsn), openTest(t, dsn), openTest(t, dsn)}
	ctx := context.Background()
	const ids = 50
	var won [ids]atomic.Int64
	var wg sync.WaitGroup
	for r, db := range dbs {
		for g := range 4 {
			wg.Go(func() {
				for i := range ids {
					ok, err := db.Claims().Claim(ctx, fmt.Sprintf("call-%d", i), fmt.Sprintf("replica-%d-%d", r, g), "pay")
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
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
	if ok, err := late.Claims().Claim(ctx, "call-0", "late", "pay"); err != nil || ok {
		t.Fatalf("a claim made before a restart: claimed again %v (%v)", ok, err)
	}
	if ok, err := late.Claims().Claim(ctx, "call-new", "late", "pay"); err != nil || !ok {
		t.Fatalf("a new id: %v (%v)", ok, err)
	}
}
