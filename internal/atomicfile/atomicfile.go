// Package atomicfile replaces a file so that a crash leaves the old
// contents or the new, never a mix: temp file in the same directory,
// fsync, rename, fsync of the directory.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data (mode 0600, os.CreateTemp's).
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // the rename itself durable; not every filesystem can
		d.Close()
	}
	return nil
}
