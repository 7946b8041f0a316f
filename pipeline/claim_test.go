package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// claimsFunc wraps a MemoryClaims' Claim; Finish and Prune go to mem.
type claimsFunc struct {
	claim func(ctx context.Context, callID, caller, tool string) (*Claim, error)
	mem   *MemoryClaims
}

func (f claimsFunc) Claim(ctx context.Context, callID, caller, tool string) (*Claim, error) {
	return f.claim(ctx, callID, caller, tool)
}
func (f claimsFunc) Finish(ctx context.Context, callID string, o ClaimOutcome) error {
	return f.mem.Finish(ctx, callID, o)
}
func (f claimsFunc) Prune(ctx context.Context, before time.Time) (int, error) {
	return f.mem.Prune(ctx, before)
}

// Only a non-idempotent call whose id the client gave is claimed; a retry
// of it is refused without running, concurrent retries included; a claim
// that cannot be recorded runs nothing.
func TestClaims(t *testing.T) {
	var claimed []string
	var mu sync.Mutex
	mem := NewMemoryClaims()
	var fail atomic.Bool
	e := newEnv(t, func(c *Config) {
		c.Claims = claimsFunc{mem: mem, claim: func(ctx context.Context, id, caller, tool string) (*Claim, error) {
			mu.Lock()
			claimed = append(claimed, tool+"/"+id)
			mu.Unlock()
			if fail.Load() {
				return nil, errors.New("database down")
			}
			return mem.Claim(ctx, id, caller, tool)
		}}
	})
	var runs sync.Map
	count := func(name string) HandlerFunc {
		return func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			n, _ := runs.LoadOrStore(name, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
			return json.RawMessage(`{}`), nil
		}
	}
	ran := func(name string) int64 {
		n, ok := runs.Load(name)
		if !ok {
			return 0
		}
		return n.(*atomic.Int64).Load()
	}
	pay := tool("pay")
	pay.Idempotent = false
	e.register(t, "p", pay, count("pay"))
	e.register(t, "p", tool("read"), count("read")) // idempotent
	call := func(id, name string) error {
		_, err := e.m.Call(context.Background(), Request{CallID: id, Tool: name, Params: []byte(`{}`), Caller: "alice"})
		return err
	}

	// Idempotent: never claimed, runs every time.
	for range 2 {
		if err := call("r-1", "read"); err != nil {
			t.Fatal(err)
		}
	}
	// No client id: not claimed (every call gets a fresh id).
	for range 2 {
		if err := call("", "pay"); err != nil {
			t.Fatal(err)
		}
	}
	if len(claimed) != 0 || ran("read") != 2 || ran("pay") != 2 {
		t.Fatalf("claimed %v, read ran %d, pay ran %d; want nothing claimed, 2 and 2", claimed, ran("read"), ran("pay"))
	}

	// Eight concurrent attempts of one id: exactly one runs; each other
	// one is refused (the first still runs) or replayed (it had ended).
	var wg sync.WaitGroup
	var refused, replays atomic.Int64
	for range 8 {
		wg.Go(func() {
			r, err := e.m.Call(context.Background(), Request{CallID: "p-1", Tool: "pay", Params: []byte(`{}`), Caller: "alice"})
			switch {
			case errors.Is(err, ErrAlreadyClaimed):
				refused.Add(1)
			case err != nil:
				t.Error(err)
			case r.Replayed:
				replays.Add(1)
			}
		})
	}
	wg.Wait()
	if ran("pay") != 3 || refused.Load()+replays.Load() != 7 {
		t.Fatalf("pay ran %d (want 3: 2 + 1), %d refused + %d replayed (want 7)", ran("pay"), refused.Load(), replays.Load())
	}

	// The claim cannot be recorded: the call does not run, and says so.
	fail.Store(true)
	err := call("p-2", "pay")
	if err == nil || errors.Is(err, ErrAlreadyClaimed) || ran("pay") != 3 {
		t.Fatalf("claim failure: err %v, pay ran %d; want an error and no run", err, ran("pay"))
	}
	// ... and a later attempt, once the store is back, runs it.
	fail.Store(false)
	if err := call("p-2", "pay"); err != nil || ran("pay") != 4 {
		t.Fatalf("after the store is back: %v, ran %d", err, ran("pay"))
	}
	if rec := e.audit.last(); rec.CallID != "p-2" || rec.Outcome != "ok" {
		t.Errorf("audit %+v", rec)
	}
}

// A retry after the first attempt ended gets that attempt's outcome,
// marked replayed, without running: its output, or its error of the same
// kind. A retry while it runs is refused with a retry-after; another
// caller's retry is refused without the output. Old claims are pruned.
func TestClaimReplay(t *testing.T) {
	mem := NewMemoryClaims()
	e := newEnv(t, func(c *Config) { c.Claims = mem })
	var ran atomic.Int64
	release := make(chan struct{})
	pay := tool("pay")
	pay.Idempotent = false
	e.register(t, "p", pay, HandlerFunc(func(_ context.Context, _ json.RawMessage, c *Call) (json.RawMessage, error) {
		n := ran.Add(1)
		switch c.ID {
		case "bad":
			return nil, Reject("insufficient_funds", "balance too low")
		case "slow":
			<-release
		}
		return json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)), nil
	}))
	call := func(id, caller string) (*Result, error) {
		return e.m.Call(context.Background(), Request{CallID: id, Tool: "pay", Params: []byte(`{}`), Caller: caller})
	}

	first, err := call("ok", "alice")
	if err != nil || first.Replayed {
		t.Fatalf("first attempt: %+v %v", first, err)
	}
	again, err := call("ok", "alice")
	if err != nil || !again.Replayed || string(again.Output) != string(first.Output) || again.Outcome != OutcomeOK || ran.Load() != 1 {
		t.Fatalf("retry: %+v %v (ran %d); want the first output %s, replayed, ran once", again, err, ran.Load(), first.Output)
	}
	if rec := e.audit.last(); rec.CallID != "ok" || !rec.Replayed || rec.Outcome != "ok" {
		t.Errorf("the replay's audit record: %+v", rec)
	}
	var ac *AlreadyClaimed
	if _, err := call("ok", "mallory"); !errors.As(err, &ac) || !ac.OtherCaller {
		t.Errorf("another caller's retry: %v; want already_claimed without the output", err)
	}

	// An error is replayed with its kind.
	if _, err := call("bad", "alice"); !errors.Is(err, ErrProviderRejected) {
		t.Fatalf("first bad attempt: %v", err)
	}
	r, err := call("bad", "alice")
	if !errors.Is(err, ErrProviderRejected) || KindOf(err) != KindProviderRejected || r == nil || !r.Replayed || r.ErrorKind != KindProviderRejected || ran.Load() != 2 {
		t.Fatalf("replayed error: %+v %v (kind %s), ran %d", r, err, KindOf(err), ran.Load())
	}

	// While the first attempt runs: already_claimed with a retry-after.
	done := make(chan error, 1)
	go func() { _, err := call("slow", "alice"); done <- err }()
	for ran.Load() != 3 {
		time.Sleep(time.Millisecond)
	}
	_, err = call("slow", "alice")
	if !errors.As(err, &ac) || ac.OtherCaller || ac.RetryAfterMs < 1000 || ac.RetryAfterMs > 30000 {
		t.Fatalf("retry while the first runs: %v", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r, err := call("slow", "alice"); err != nil || !r.Replayed || ran.Load() != 3 {
		t.Fatalf("retry after the first ended: %+v %v", r, err)
	}

	// Pruning: claims older than the retention go, and the id runs again.
	now := time.Now()
	mem.Now = func() time.Time { return now.Add(8 * 24 * time.Hour) }
	if n, err := mem.Prune(context.Background(), now.Add(time.Hour)); err != nil || n != 3 {
		t.Fatalf("prune: %d %v; want the 3 claims", n, err)
	}
	if r, err := call("ok", "alice"); err != nil || r.Replayed || ran.Load() != 4 {
		t.Fatalf("after pruning: %+v %v; want a fresh run", r, err)
	}
	// ... and Claim prunes by itself past the retention.
	mem.Retention = time.Hour
	mem.Now = func() time.Time { return now.Add(8*24*time.Hour + 2*time.Hour) }
	if r, err := call("ok", "alice"); err != nil || r.Replayed || ran.Load() != 5 {
		t.Fatalf("after the retention: %+v %v; want a fresh run", r, err)
	}
}
