package watch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// readBatch is how many directory entries are read at a time: a
// directory of a million files costs no more memory than one of 256.
const readBatch = 256

// walk watches the directories of q and, breadth first, the directories
// below them, each of which holds a reserved slot. With synth, the regular
// files found are reported as created: they appeared in a new directory
// before its watch did. Symbolic links are never followed.
func (w *Watcher) walk(q []ctrl, synth bool) {
	for len(q) > 0 {
		c := q[0]
		q = q[1:]
		if w.isDone() {
			w.mu.Lock()
			w.reserved -= len(q) + 1
			w.mu.Unlock()
			return
		}
		if !w.watchDir(c) {
			continue
		}
		f, err := os.Open(c.path)
		if err != nil {
			w.readFailed(c, err)
			continue
		}
		now := time.Now()
		for {
			ents, err := f.ReadDir(readBatch)
			for _, e := range ents {
				child := c.path + string(filepath.Separator) + e.Name()
				rel, _ := relIn(c.sp.real, child)
				if w.ignore(rel) {
					continue
				}
				switch t := e.Type(); {
				case t.IsDir(): // a symbolic link to a directory is not IsDir
					w.mu.Lock()
					_, known := w.dirs[child]
					ok := !known && c.depth+1 <= w.maxDepth && w.reserveLocked()
					if !known && c.depth+1 > w.maxDepth {
						w.skipped++
					}
					w.mu.Unlock()
					if ok {
						q = append(q, ctrl{path: child, sp: c.sp, depth: c.depth + 1})
					}
				case synth && t.IsRegular():
					w.note(child, c.sp, rel, OpCreate, now)
				}
			}
			if err != nil {
				if err != io.EOF {
					w.readFailed(c, err)
				}
				break
			}
			if w.isDone() {
				break // Close is waiting; the loop's head gives the slots back
			}
		}
		f.Close()
	}
}

func (w *Watcher) readFailed(c ctrl, err error) {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return // gone again
	}
	w.fail(fmt.Errorf("space %s: directory %s cannot be read: %w", c.sp.name, c.path, err))
}

// watchDir adds the watch of c, whose slot was reserved; it is false when
// the directory is not watched (already, or the watch failed).
func (w *Watcher) watchDir(c ctrl) bool {
	w.mu.Lock()
	w.reserved--
	_, known := w.dirs[c.path]
	if !known && w.osLimit > 0 && len(w.dirs) >= w.osLimit {
		w.skipped++
		w.mu.Unlock()
		return false
	}
	w.mu.Unlock()
	if known {
		return false
	}
	err := w.add.Add(c.path)
	if err == nil {
		w.mu.Lock()
		w.dirs[c.path] = dirInfo{sp: c.sp, depth: c.depth}
		w.mu.Unlock()
		return true
	}
	if w.isDone() {
		return false
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EMFILE):
		w.errCount.Add(1)
		w.mu.Lock()
		w.osLimit = max(len(w.dirs), 1)
		w.limited = true
		w.skipped++
		how := "sysctl fs.inotify.max_user_watches=524288 (add it to /etc/sysctl.conf to keep it)"
		if errors.Is(err, syscall.EMFILE) {
			how = "the open-file limit (ulimit -n)"
		}
		w.lastErr = fmt.Sprintf("space %s: the OS refused to watch %s (%v): its watch limit is reached with %d directories watched; new directories are not watched until some go away; raise it with %s",
			c.sp.name, c.path, err, len(w.dirs), how)
		w.mu.Unlock()
	case errors.Is(err, os.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		// gone again
	default:
		w.fail(fmt.Errorf("space %s: directory %s cannot be watched: %w", c.sp.name, c.path, err))
	}
	return false
}

// forget drops the watches of a directory that was removed or moved away,
// and of the directories below it (a moved directory's watches would
// otherwise live on under its old name).
func (w *Watcher) forget(path string) {
	prefix := path + string(filepath.Separator)
	var gone []string
	w.mu.Lock()
	for p := range w.dirs {
		if p == path || strings.HasPrefix(p, prefix) {
			gone = append(gone, p)
			delete(w.dirs, p)
			if old := w.forgotRing[w.forgotNext]; old != "" {
				delete(w.forgotten, old)
			}
			w.forgotRing[w.forgotNext] = p
			w.forgotNext = (w.forgotNext + 1) % len(w.forgotRing)
			w.forgotten[p] = true
		}
	}
	w.mu.Unlock()
	for _, p := range gone {
		w.add.Remove(p) // an error: the OS dropped it already
	}
}
