//go:build !linux

package turns

import (
	"errors"
	"time"
)

var errNoThreadPriority = errors.New("turns: no per-thread priority here")

// ThreadCPU: a thread's CPU time is not read here; the meter counts the
// time the work held its slot instead.
func ThreadCPU() (time.Duration, bool) { return 0, false }

func threadNice() (int, error) { return 0, errNoThreadPriority }

func setThreadNice(int) error { return errNoThreadPriority }
