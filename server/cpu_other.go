//go:build !linux

package server

import "time"

// threadCPU: a thread's CPU time is not read here; the meter counts the
// time the work held its slot instead.
func threadCPU() (time.Duration, bool) { return 0, false }
