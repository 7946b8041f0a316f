//go:build !unix

package guard

import "os"

// Without flock, two processes changing the store at once may lose one
// change (never the file: writes are atomic renames).
func lockFile(*os.File) error   { return nil }
func unlockFile(*os.File) error { return nil }
