//go:build !linux

package turns

import "time"

// ThreadCPU: a thread's CPU time is not read here; the meter counts the
// time the work held its slot instead.
func ThreadCPU() (time.Duration, bool) { return 0, false }
