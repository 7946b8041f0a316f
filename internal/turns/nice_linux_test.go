//go:build linux

package turns

import (
	"context"
	"runtime"
	"testing"
	"time"
)

func TestMeteredHeavyWorkRunsAtLowerPriority(t *testing.T) {
	if !canRenice() {
		t.Skip("this process may not raise a thread's priority back (not root, RLIMIT_NICE 0): heavy work keeps its priority here")
	}
	// Locked here too, so that the thread after done is the one before.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	if before > 19-heavyNice {
		t.Skipf("the test runs at nice %d already: no room to lower a thread by %d", before, heavyNice)
	}
	var charged time.Duration
	ctx, done := Heavy(WithCharge(context.Background(), func(cpu time.Duration) { charged = cpu }))
	during, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	if during != before+heavyNice {
		t.Errorf("nice during metered heavy work = %d, want %d", during, before+heavyNice)
	}
	Yield(ctx)
	done()
	after, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("nice after the heavy work = %d, want it back at %d", after, before)
	}
	if charged < 0 {
		t.Errorf("charged %v", charged)
	}
	// Unmetered heavy work (no charge) leaves the thread as it is.
	_, done = Heavy(context.Background())
	if n, _ := threadNice(); n != before {
		t.Errorf("nice during unmetered heavy work = %d, want %d", n, before)
	}
	done()
}
