package pipeline

import (
	"sync"
	"testing"
)

func TestSubscribeSeesDeliveredCalls(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("a"), echo)
	sub := e.m.Subscribe(4)
	defer sub.Close()
	if _, err := e.call("a", `{}`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call("missing", `{}`); err == nil {
		t.Fatal("want an error for a missing tool")
	}
	ev := <-sub.C
	if ev.Tool != "a" || ev.Caller != "alice" || ev.Outcome != OutcomeOK || string(ev.Params) != `{}` {
		t.Fatalf("first event %+v", ev)
	}
	ev = <-sub.C
	if ev.Tool != "missing" || ev.Outcome != OutcomeError || ev.ErrorKind == "" {
		t.Fatalf("second event %+v", ev)
	}
}

// A full subscriber misses events (counted) and never blocks a call.
func TestSubscribeNeverBlocks(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("a"), echo)
	sub := e.m.Subscribe(2)
	defer sub.Close()
	for range 10 {
		if _, err := e.call("a", `{}`); err != nil {
			t.Fatal(err)
		}
	}
	if len(sub.C) != 2 || sub.Dropped() != 8 {
		t.Fatalf("buffered %d, dropped %d; want 2 and 8", len(sub.C), sub.Dropped())
	}
}

// Closing subscriptions while calls are delivered is safe (run with -race).
func TestSubscribeCloseConcurrent(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "p", tool("a"), echo)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				_, _ = e.call("a", `{}`)
			}
		}()
	}
	for range 50 {
		s := e.m.Subscribe(1)
		s.Close()
		s.Close()
	}
	wg.Wait()
	s := e.m.Subscribe(1)
	s.Close()
	if _, ok := <-s.C; ok {
		t.Fatal("a closed subscription's channel is closed")
	}
}
