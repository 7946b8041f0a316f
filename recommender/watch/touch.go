package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Touch injects an event for rel (relative to the space's root, or
// absolute inside it), e.g. OpOpen when a client says it opened a file. It
// is debounced and delivered like the OS's events, but Ignore does not
// apply. A path that leaves the space, lexically ("../x", an absolute path
// elsewhere) or through a symbolic link, is an error.
func (w *Watcher) Touch(spaceName, rel string, op Op) error {
	if !op.valid() {
		return fmt.Errorf("watch: unknown op %q", op)
	}
	if w.isDone() {
		return ErrClosed
	}
	sp, real, realRel, err := w.resolveIn(spaceName, rel)
	if err != nil {
		return err
	}
	if !w.note(real, sp, realRel, op, time.Now()) {
		return ErrPendingFull
	}
	return nil
}

// Resolve checks a path as Touch does and returns it relative to the
// space's root, with its symbolic links resolved, without an event: for
// what concerns one caller only (a client saying it opened a file), which
// the watcher's events, everyone's, must not carry.
func (w *Watcher) Resolve(spaceName, rel string) (string, error) {
	_, _, realRel, err := w.resolveIn(spaceName, rel)
	return realRel, err
}

func (w *Watcher) resolveIn(spaceName, rel string) (sp *space, real, realRel string, err error) {
	sp = w.byName[spaceName]
	if sp == nil {
		return nil, "", "", fmt.Errorf("watch: unknown space %q", spaceName)
	}
	if filepath.IsAbs(rel) {
		r, ok := relIn(sp.root, rel)
		if !ok {
			if r, ok = relIn(sp.real, rel); !ok {
				return nil, "", "", fmt.Errorf("watch: %s is outside space %s (%s)", rel, sp.name, sp.root)
			}
		}
		rel = r
	}
	rel = filepath.Clean(rel)
	if rel == "." {
		return nil, "", "", fmt.Errorf("watch: %q names the root of space %s, not a file in it", rel, sp.name)
	}
	if rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, "", "", fmt.Errorf("watch: %s leaves space %s", rel, sp.name)
	}
	real, err = resolve(filepath.Join(sp.real, rel))
	if err != nil {
		return nil, "", "", fmt.Errorf("watch: %s in space %s: %w", rel, sp.name, err)
	}
	realRel, ok := relIn(sp.real, real)
	if !ok || realRel == "." {
		return nil, "", "", fmt.Errorf("watch: %s in space %s leads outside it through a symbolic link (to %s)", rel, sp.name, real)
	}
	return sp, real, realRel, nil
}

// relIn is path relative to root when path is root or below it.
func relIn(root, path string) (string, bool) {
	path = filepath.Clean(path)
	if path == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if r, ok := strings.CutPrefix(path, prefix); ok {
		return r, true
	}
	return "", false
}

// resolve resolves the symbolic links of path's longest existing prefix
// (the rest, which does not exist yet, cannot hold links).
func resolve(path string) (string, error) {
	r, err := filepath.EvalSymlinks(path)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	dir := filepath.Dir(path)
	if dir == path {
		return "", err
	}
	r, err = resolve(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(r, filepath.Base(path)), nil
}
