//go:build !unix

package filelock

import "os"

// Supported tells whether Lock locks on this system.
const Supported = false

func lock(*os.File) error   { return nil }
func unlock(*os.File) error { return nil }
