package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

type claimsFunc func(ctx context.Context, callID, caller, tool string) (bool, error)

func (f claimsFunc) Claim(ctx context.Context, callID, caller, tool string) (bool, error) {
	return f(ctx, callID, caller, tool)
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
		c.Claims = claimsFunc(func(ctx context.Context, id, caller, tool string) (bool, error) {
			mu.Lock()
			claimed = append(claimed, tool+"/"+id)
			mu.Unlock()
			if fail.Load() {
				return false, errors.New("database down")
			}
			return mem.Claim(ctx, id, caller, tool)
		})
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

	// Eight concurrent attempts of one id: exactly one runs.
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range 8 {
		wg.Go(func() {
			if err := call("p-1", "pay"); errors.Is(err, ErrAlreadyClaimed) {
				refused.Add(1)
			} else if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if ran("pay") != 3 || refused.Load() != 7 {
		t.Fatalf("pay ran %d (want 3: 2 + 1), %d refused (want 7)", ran("pay"), refused.Load())
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
