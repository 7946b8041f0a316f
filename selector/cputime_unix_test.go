//go:build unix

package selector_test

import "syscall"

// processCPU is the CPU time the process has used (user + system), in
// seconds: the benchmark reports it per plan beside the wall time, which a
// shared machine's load inflates.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
