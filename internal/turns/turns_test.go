package turns

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// spin is a unit of heavy work, with a checkpoint after it.
func spin(ctx context.Context, units *atomic.Int64, stop *atomic.Bool) {
	x := 1.0
	for !stop.Load() {
		for i := 0; i < 2000; i++ {
			x = x*1.0000001 + 1e-9
		}
		if x == 0 {
			panic("unreachable")
		}
		units.Add(1)
		Yield(ctx)
	}
}

// TestLightRunsWhileHeavyWorks: on one P, a light goroutine that becomes
// runnable while heavy work computes runs at the heavy work's next
// checkpoint after its quantum, and the heavy work then waits (is not
// runnable) until the light work ends. Without the checkpoints the light
// goroutine would run only when the scheduler preempts the heavy one, and
// the heavy one would be runnable beside it.
func TestLightRunsWhileHeavyWorks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer SetMaxWait(time.Minute)() // the wait ends by the light work's end, not by time
	waits0 := Waits()

	_, end := Light(context.Background())
	var units atomic.Int64
	var stop atomic.Bool
	started, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		close(started) // makes this goroutine runnable; the heavy work keeps the P
		ctx, done := Heavy(context.Background())
		defer done()
		spin(ctx, &units, &stop)
	}()
	<-started
	// Running again: the heavy work gave way at a checkpoint.
	n1 := units.Load()
	for range 100 {
		runtime.Gosched() // the heavy goroutine would run here if it were runnable
	}
	n2 := units.Load()
	if n1 == 0 {
		t.Fatalf("the light goroutine ran before the heavy work did any")
	}
	if n2 != n1 {
		t.Fatalf("the heavy work ran on (%d → %d units) while light work was in flight: it did not wait for it", n1, n2)
	}
	if Waits() == waits0 {
		t.Fatalf("no wait recorded")
	}
	end()
	// With no light work in flight, the heavy work runs on.
	for units.Load() == n2 {
		runtime.Gosched()
	}
	stop.Store(true)
	<-finished
}

// TestHeavyWorkIsNeverStopped: light work that stays in flight slows
// heavy work (a wait of at most maxWait per quantum), never stops it.
func TestHeavyWorkIsNeverStopped(t *testing.T) {
	defer SetMaxWait(100 * time.Microsecond)()
	_, end := Light(context.Background())
	defer end()
	var units atomic.Int64
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, end := Heavy(context.Background())
		defer end()
		spin(ctx, &units, &stop)
	}()
	w0 := Waits()
	for Waits() < w0+3 { // it waited, and went on, three times
		runtime.Gosched()
	}
	stop.Store(true)
	<-done
}

// TestHeavyInALightRequest: a light request whose work turns heavy stops
// counting as light work (so other heavy work does not wait for it), its
// own checkpoints give way, it counts as light again after, and not after
// it ended; heavy work of it on two goroutines at once is heavy until both
// are done.
func TestHeavyInALightRequest(t *testing.T) {
	base := InFlight()
	ctx, end := Light(context.Background())
	if InFlight() != base+1 {
		t.Fatalf("in flight %d, want %d", InFlight(), base+1)
	}
	hctx, done := Heavy(ctx)
	_, done2 := Heavy(ctx)
	if InFlight() != base {
		t.Fatalf("heavy work counted as light: %d", InFlight())
	}
	if tk := hctx.Value(key{}).(*token); !tk.heavy.Load() || tk != ctx.Value(key{}).(*token) {
		t.Fatal("the request's own context does not see its work heavy")
	}
	done()
	done()
	if InFlight() != base {
		t.Fatalf("light again while heavy work of it still runs: %d", InFlight())
	}
	done2()
	if InFlight() != base+1 {
		t.Fatalf("after the heavy part: in flight %d, want %d", InFlight(), base+1)
	}
	_, done3 := Heavy(ctx)
	end()
	done3() // ended while heavy: not light again
	end()
	if InFlight() != base {
		t.Fatalf("after the end: in flight %d, want %d", InFlight(), base)
	}
	if Func(context.Background()) != nil {
		t.Fatal("a checkpoint for unmarked work")
	}
	_, end2 := Light(context.Background())
	Idle(ctx)
	end2()
	if InFlight() != base {
		t.Fatalf("after Idle: in flight %d, want %d", InFlight(), base)
	}
}

// TestHeavyWorkIsCharged: heavy work on a goroutine of its own reports
// the CPU it used to the charge its request's context carries, when it is
// done.
func TestHeavyWorkIsCharged(t *testing.T) {
	got := make(chan time.Duration, 1)
	ctx := WithCharge(context.Background(), func(cpu time.Duration) { got <- cpu })
	base := InFlight()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		_, done := Heavy(ctx)
		defer done()
		var units atomic.Int64
		var stop atomic.Bool
		go func() {
			for units.Load() < 200 {
				runtime.Gosched()
			}
			stop.Store(true)
		}()
		spin(ctx, &units, &stop)
	}()
	if cpu := <-got; cpu <= 0 {
		t.Fatalf("charged %v", cpu)
	}
	<-finished
	if InFlight() != base {
		t.Fatalf("heavy work outside a request counted as light after it: %d, want %d", InFlight(), base)
	}
}

// BenchmarkYield: a checkpoint's cost with no light work in flight (the
// usual case), and with some while the quantum is not yet used.
func BenchmarkYield(b *testing.B) {
	ctx, done := Heavy(context.WithValue(context.WithValue(context.Background(), struct{ a int }{}, 1), struct{ b int }{}, 2))
	defer done()
	b.Run("no-light", func(b *testing.B) {
		for b.Loop() {
			Yield(ctx)
		}
	})
	b.Run("light-within-quantum", func(b *testing.B) {
		_, end := Light(context.Background())
		defer end()
		t := ctx.Value(key{}).(*token)
		for b.Loop() {
			t.since.Store(now()) // the quantum never runs out
			Yield(ctx)
		}
	})
}
