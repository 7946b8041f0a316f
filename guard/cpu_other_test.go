//go:build !unix

package guard

import "time"

func processCPU() time.Duration { return 0 }
