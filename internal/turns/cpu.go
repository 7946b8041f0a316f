package turns

import (
	"runtime"
	"time"
)

// cpuMeter measures the CPU time one goroutine uses between start and
// stop: the goroutine is locked to its thread meanwhile, so the thread's
// CPU clock counts its work (garbage collection it is made to assist with
// included) and nothing of other goroutines'. Where no thread clock can
// be read, it counts the time between start and stop, which is the CPU a
// computation that has a core to itself uses, or more.
type cpuMeter struct {
	cpu0  time.Duration
	wall0 time.Time
	clock bool
}

// startCPUMeter locks the calling goroutine to its thread and starts
// counting; stop must be called on the same goroutine.
func startCPUMeter() *cpuMeter {
	runtime.LockOSThread()
	m := &cpuMeter{wall0: time.Now()}
	m.cpu0, m.clock = ThreadCPU()
	return m
}

// stop ends the count, unlocks the goroutine and answers the CPU used.
func (m *cpuMeter) stop() time.Duration {
	defer runtime.UnlockOSThread()
	if m.clock {
		if t, ok := ThreadCPU(); ok {
			return max(t-m.cpu0, 0)
		}
	}
	return time.Since(m.wall0)
}
