//go:build unix

package guard

import (
	"syscall"
	"time"
)

// processCPU is the process's user and system CPU time so far: a
// benchmark on a shared machine reports it per op beside the wall time,
// which includes the time spent waiting for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
