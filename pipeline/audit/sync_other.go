//go:build !linux

package audit

import "os"

func syncData(f *os.File) error { return f.Sync() }
