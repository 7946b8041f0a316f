package audit

import (
	"os"
	"syscall"
)

// syncData is fdatasync: it flushes the data and the metadata needed to read
// it back (the file size), skipping timestamps — cheaper than fsync for an
// append-only file, and as durable.
func syncData(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
