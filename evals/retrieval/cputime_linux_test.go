//go:build linux

package retrieval

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time the calling OS thread has used
// (CLOCK_THREAD_CPUTIME_ID): on a machine shared with other work, wall
// time measures the queue for the processor, this measures the work.
// Callers lock their goroutine to its thread.
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	_, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
