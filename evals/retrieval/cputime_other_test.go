//go:build !linux

package retrieval

import "time"

// threadCPU is not measured off Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
