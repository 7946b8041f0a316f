//go:build !unix

package audit

import "os"

// Without flock, several processes appending to one log could fork the
// chain; on these systems one process at a time must write it.
func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }
