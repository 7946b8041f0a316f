//go:build inproc

package inproc

import (
	"runtime"
	"testing"
)

// TestThreadsSet: the thread counts Open asks for are the ones llama.cpp
// reports — which also checks that setThreads found the C context where
// it expects it in the bindings' Context (a wrong layout reads garbage or
// crashes here, not in a user's decode).
func TestThreadsSet(t *testing.T) {
	for _, c := range []struct{ threads, batch, wantT, wantB int }{
		{1, 2, 1, 2},
		{1, 3, 1, 3},
		{0, 0, max(1, runtime.NumCPU()/2), max(1, runtime.NumCPU())},
	} {
		e, closeE, err := Open(tinyGGUF(t), Options{ContextLen: 512, Threads: c.threads, BatchThreads: c.batch})
		if err != nil {
			t.Fatal(err)
		}
		lb := e.b.(*llamaBackend)
		gt, gb := threadCounts(lb.c)
		if gt != c.wantT || gb != c.wantT {
			t.Errorf("Options{Threads: %d, BatchThreads: %d}: llama.cpp starts with %d and %d threads, want %d for both (short runs overlap the mask)",
				c.threads, c.batch, gt, gb, c.wantT)
		}
		// A prompt-sized batch switches the batch threads on.
		toks := make([]int, bigBatch)
		for i := range toks {
			toks[i] = 1
		}
		lb.Reset()
		if _, err := lb.Eval(toks); err != nil {
			t.Fatal(err)
		}
		gt, gb = threadCounts(lb.c)
		closeE()
		if gt != c.wantT || gb != c.wantB {
			t.Errorf("Options{Threads: %d, BatchThreads: %d}: llama.cpp has %d and %d threads, want %d and %d",
				c.threads, c.batch, gt, gb, c.wantT, c.wantB)
		}
	}
}
