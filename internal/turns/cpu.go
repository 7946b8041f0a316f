package turns

import (
	"runtime"
	"sync"
	"time"
)

// heavyNice is how far a metered heavy run's thread is lowered in the
// operating system's priority (nice, Linux; at most 19). Yield makes heavy
// work give way to light work inside this process only: the scheduler of
// the machine still splits a core evenly between the heavy run's thread
// and a light request's, or another program's. At nice +10 a runnable
// thread of normal priority gets about nine tenths of a contended core,
// and the heavy run all of an idle one.
const heavyNice = 10

// canRenice reports whether this process may lower a thread's priority
// and raise it back (Linux lets an unprivileged process lower it only,
// unless RLIMIT_NICE allows more): without the way back, a thread would
// stay slow for whatever goroutine runs on it next.
var canRenice = sync.OnceValue(func() bool {
	ok := make(chan bool)
	go func() {
		// Locked and never unlocked: the thread ends with this goroutine,
		// whatever priority the probe leaves it at.
		runtime.LockOSThread()
		n, err := threadNice()
		ok <- err == nil && n < 19 && setThreadNice(n+1) == nil && setThreadNice(n) == nil
	}()
	return <-ok
})

// cpuMeter measures the CPU time one goroutine uses between start and
// stop: the goroutine is locked to its thread meanwhile, so the thread's
// CPU clock counts its work (garbage collection it is made to assist with
// included) and nothing of other goroutines'. Where no thread clock can
// be read, it counts the time between start and stop, which is the CPU a
// computation that has a core to itself uses, or more. Meanwhile the
// thread runs at a lower priority (heavyNice) where the process may raise
// it back after.
type cpuMeter struct {
	cpu0  time.Duration
	wall0 time.Time
	clock bool
	nice0 int
	niced bool
}

// startCPUMeter locks the calling goroutine to its thread and starts
// counting; stop must be called on the same goroutine.
func startCPUMeter() *cpuMeter {
	runtime.LockOSThread()
	m := &cpuMeter{wall0: time.Now()}
	if canRenice() {
		if n, err := threadNice(); err == nil && n < 19 && setThreadNice(min(n+heavyNice, 19)) == nil {
			m.nice0, m.niced = n, true
		}
	}
	m.cpu0, m.clock = ThreadCPU()
	return m
}

// stop ends the count, gives the thread its priority back, unlocks the
// goroutine and answers the CPU used.
func (m *cpuMeter) stop() time.Duration {
	cpu := time.Since(m.wall0)
	if m.clock {
		if t, ok := ThreadCPU(); ok {
			cpu = max(t-m.cpu0, 0)
		}
	}
	if m.niced && setThreadNice(m.nice0) != nil {
		// The thread stays locked: it ends with this goroutine rather
		// than run another at the lower priority.
		return cpu
	}
	runtime.UnlockOSThread()
	return cpu
}
