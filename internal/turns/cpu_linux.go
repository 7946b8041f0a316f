//go:build linux

package turns

import (
	"syscall"
	"time"
	"unsafe"
)

// ThreadCPU is the CPU time the calling thread has used (Linux:
// CLOCK_THREAD_CPUTIME_ID), and true; the goroutine must be locked to its
// thread for the difference of two readings to be its own.
func ThreadCPU() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// threadNice is the calling thread's nice value (Linux priorities are per
// thread); the goroutine must be locked to its thread.
func threadNice() (int, error) {
	// The raw system call answers 20 - nice, so that it is never negative.
	raw, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		return 0, err
	}
	return 20 - raw, nil
}

// setThreadNice sets the calling thread's nice value.
func setThreadNice(n int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), n)
}
