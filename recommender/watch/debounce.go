package watch

import (
	"container/heap"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// fold is the operation two events on one path within the debounce make:
// the later one, except that a create stays a create through writes and
// opens (the file is new), and a write stays a write through opens.
func fold(old, new Op) Op {
	switch {
	case old == OpCreate && (new == OpWrite || new == OpOpen):
		return OpCreate
	case old == OpWrite && new == OpOpen:
		return OpWrite
	}
	return new
}

// note records a raw event for path; it is false when the event was
// dropped because MaxPending paths are pending.
func (w *Watcher) note(path string, sp *space, rel string, op Op, at time.Time) bool {
	w.raw.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.pend[path]; p != nil {
		p.op = fold(p.op, op)
		p.last = at
		return true
	}
	if len(w.pend) >= w.maxPending {
		w.dropped.Add(1)
		return false
	}
	w.pend[path] = &pending{sp: sp, rel: rel, op: op, first: at, last: at}
	heap.Push(&w.due, dueItem{at: at.Add(w.debounce), path: path})
	if len(w.due) == 1 {
		w.signal()
	}
	return true
}

// dueAt is when p is delivered: after Debounce without another event, and
// no later than 5×Debounce after its first.
func (w *Watcher) dueAt(p *pending) time.Time {
	d := p.last.Add(w.debounce)
	if m := p.first.Add(w.maxWait); d.After(m) {
		return m
	}
	return d
}

// flush delivers p, if it is still worth delivering: a create, write or
// open must name a regular file that can be opened for reading.
func (w *Watcher) flush(p *pending) {
	real := filepath.Join(p.sp.real, p.rel)
	if p.op == OpCreate || p.op == OpWrite || p.op == OpOpen {
		fi, err := os.Lstat(real)
		if err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				w.fail(err)
			}
			return // gone again: its remove follows
		}
		if !fi.Mode().IsRegular() {
			return // directories, symbolic links, devices, pipes: no events
		}
		f, err := os.Open(real)
		if err != nil {
			w.fail(fmt.Errorf("space %s: %s cannot be read: %w", p.sp.name, p.rel, err))
			return
		}
		f.Close()
	}
	w.delivered.Add(1)
	defer func() {
		if r := recover(); r != nil {
			w.fail(fmt.Errorf("deliver panicked: %v", r))
		}
	}()
	w.deliver(Event{Space: p.sp.name, Path: filepath.Join(p.sp.root, p.rel), Rel: p.rel, Op: p.op, At: p.last,
		Also: w.alsoIn(p.sp, real)})
}

// alsoIn names the file at real in every space but own that holds it (a
// directory is watched once, for the space that reached it first; the
// spaces nested in it or sharing it are found here, by path).
func (w *Watcher) alsoIn(own *space, real string) []Alias {
	var out []Alias
	for _, sp := range w.spaces {
		if sp == own || !sp.ok {
			continue
		}
		rel, ok := relIn(sp.real, real)
		if !ok || rel == "." || w.ignore(rel) {
			continue
		}
		out = append(out, Alias{Space: sp.name, Path: filepath.Join(sp.root, rel), Rel: rel})
	}
	return out
}

type dueItem struct {
	at   time.Time
	path string
}

// dueHeap orders pending paths by when they may be due; an entry whose
// path saw events since is pushed back with its new time when it comes up.
type dueHeap []dueItem

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h dueHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)        { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = dueItem{}
	*h = old[:len(old)-1]
	return it
}
