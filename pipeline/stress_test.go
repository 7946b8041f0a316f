package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
	"go.uber.org/goleak"
)

// TestStress10kConcurrentCalls fires 10,000 calls at once, across handlers
// that answer, sleep, return partial output on cancel, ignore their
// context, panic or reject, with random timeouts and random cancellations
// (by call id and by the caller's context). Every call must get exactly one
// outcome consistent with its error, the durable audit log must hold
// exactly one record per call, and no goroutine may be left behind.
func TestStress10kConcurrentCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	// regexp2's match-timeout clock is a library goroutine that stops by
	// itself shortly after the last timed match.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/dlclark/regexp2.runClock"))

	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(RegistryConfig{})
	m, err := NewManager(Config{Registry: reg, Audit: log, Breaker: BreakerConfig{Failures: -1}, CancelGrace: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sleep := func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	handlers := map[string]HandlerFunc{
		"fast": func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) { return p, nil },
		"sleepy": func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
			if err := sleep(ctx, time.Duration(rand.IntN(20))*time.Millisecond); err != nil {
				return json.RawMessage(`{"partial":true}`), err
			}
			return p, nil
		},
		"stubborn": func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond) // ignores ctx
			return p, nil
		},
		"panicky": func(ctx context.Context, p json.RawMessage, _ *Call) (json.RawMessage, error) {
			if rand.IntN(2) == 0 {
				panic("boom")
			}
			return p, nil
		},
		"reject": func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
			return nil, Reject("nope", "refused")
		},
	}
	names := []string{"fast", "sleepy", "stubborn", "panicky", "reject", "missing"}
	for name, h := range handlers {
		tl := tool(name)
		tl.Parameters = objSchema(`{"i":{"type":"integer"}}`, "i")
		if err := reg.Register("p", tl, h); err != nil {
			t.Fatal(err)
		}
	}

	const n = 10000
	var (
		returns  [n]atomic.Int32
		outcomes sync.Map // Outcome → *atomic.Int64
		wg       sync.WaitGroup
		start    = make(chan struct{})
	)
	bump := func(o Outcome) {
		v, _ := outcomes.LoadOrStore(o, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("s-%d", i)
			req := Request{CallID: id, Tool: names[i%len(names)], Caller: fmt.Sprintf("agent-%d", i%7),
				Params: []byte(fmt.Sprintf(`{"i":%d}`, i)), Timeout: time.Duration(1+rand.IntN(30)) * time.Millisecond}
			if i%13 == 0 {
				req.Params = []byte(`{"i":"not a number"}`)
			}
			<-start
			ctx := context.Background()
			switch rand.IntN(10) {
			case 0, 1, 2: // cancel by id at a random moment
				d := time.Duration(rand.IntN(15)) * time.Millisecond
				tm := time.AfterFunc(d, func() { m.Cancel(id) })
				defer tm.Stop()
			case 3: // the caller's own context
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				tm := time.AfterFunc(time.Duration(rand.IntN(15))*time.Millisecond, cancel)
				defer tm.Stop()
				defer cancel()
			}
			res, err := m.Call(ctx, req)
			returns[i].Add(1)
			if res == nil {
				t.Errorf("%s: nil result", id)
				return
			}
			bump(res.Outcome)
			ok := true
			switch res.Outcome {
			case OutcomeOK:
				ok = err == nil && res.ErrorKind == ""
			case OutcomeCancelled:
				ok = errors.Is(err, ErrCancelled)
			case OutcomeTimeout:
				ok = errors.Is(err, ErrTimeout)
			case OutcomeError:
				ok = err != nil && !errors.Is(err, ErrCancelled) && !errors.Is(err, ErrTimeout) && KindOf(err) != "internal"
			default:
				ok = false
			}
			if !ok || res.CallID != id {
				t.Errorf("%s: outcome %q with error %v", id, res.Outcome, err)
			}
		}()
	}
	close(start)
	wg.Wait()

	total := int64(0)
	summary := map[Outcome]int64{}
	outcomes.Range(func(k, v any) bool {
		summary[k.(Outcome)] = v.(*atomic.Int64).Load()
		total += summary[k.(Outcome)]
		return true
	})
	for i := range n {
		if c := returns[i].Load(); c != 1 {
			t.Fatalf("call %d returned %d times", i, c)
		}
	}
	if total != n {
		t.Fatalf("%d outcomes for %d calls", total, n)
	}
	for _, o := range []Outcome{OutcomeOK, OutcomeError, OutcomeCancelled, OutcomeTimeout} {
		if summary[o] == 0 {
			t.Errorf("no %s outcome: the mix does not exercise it (%v)", o, summary)
		}
	}
	snap := m.Metrics()
	var mt uint64
	for _, c := range snap.Calls {
		mt += c
	}
	if mt != n || snap.InFlight != 0 {
		t.Fatalf("metrics: %d calls, %d in flight", mt, snap.InFlight)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(log.Path())
	if err != nil || !rep.OK() || rep.Records != n {
		t.Fatalf("audit: %+v %v", rep, err)
	}
	recs, _ := audit.Tail(log.Path(), n)
	seen := map[string]bool{}
	for _, r := range recs {
		if seen[r.CallID] {
			t.Fatalf("call %s audited twice", r.CallID)
		}
		seen[r.CallID] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct audited calls", len(seen))
	}
	t.Logf("outcomes: %v", summary)
}
