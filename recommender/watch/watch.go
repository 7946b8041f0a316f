package watch

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Op is what happened to a file.
type Op string

// The operations an Event carries. OpOpen never comes from the OS: only
// [Watcher.Touch] injects it.
const (
	OpCreate Op = "create"
	OpWrite  Op = "write"
	OpRemove Op = "remove"
	OpRename Op = "rename" // the file left this path (it was moved away or renamed)
	OpOpen   Op = "open"
)

func (o Op) valid() bool {
	switch o {
	case OpCreate, OpWrite, OpRemove, OpRename, OpOpen:
		return true
	}
	return false
}

// Event is one file change, after debouncing.
type Event struct {
	Space string    // the space's name
	Path  string    // absolute: the space's root as configured, joined with Rel
	Rel   string    // relative to the space's root, with the OS separator
	Op    Op        // the folded operation (see the package doc)
	At    time.Time // the last raw event folded into this one
	// Also names the same file in the other spaces that hold it, when
	// spaces nest or share a folder: a reader of only one of them must
	// hear of the file under the name it may read.
	Also []Alias
}

// Alias is a file's name in another space that holds it.
type Alias struct {
	Space string // the space's name
	Path  string // absolute: that space's root as configured, joined with Rel
	Rel   string // relative to that space's root, with the OS separator
}

// The defaults for Config's zero fields.
const (
	DefaultDebounce   = 200 * time.Millisecond
	DefaultMaxDirs    = 4096
	DefaultMaxDepth   = 8
	DefaultMaxPending = 1024
)

// Config is what Start watches, and its bounds. Zero values take the
// defaults above.
type Config struct {
	Spaces     map[string]string // space name → root folder
	Debounce   time.Duration     // events for one path within this window fold into one
	MaxDirs    int               // directories watched in all spaces together
	MaxDepth   int               // directory levels watched below a root (the root is level 0)
	MaxPending int               // paths waiting out their debounce; beyond, new paths are dropped
	// Ignore reports whether a path (relative to its space's root) is left
	// out: an ignored directory is not watched, an ignored file yields no
	// events. Nil means DefaultIgnore.
	Ignore func(rel string) bool
}

// Stats is a snapshot of a Watcher's state and counters.
type Stats struct {
	Dirs    int // directories watched now
	Pending int // paths waiting out their debounce now (never above MaxPending)

	Raw         uint64 // raw events taken in: from the OS (file events only) and Touch
	Delivered   uint64 // events handed to deliver
	Dropped     uint64 // events dropped because MaxPending paths were already pending
	DirsSkipped uint64 // directories seen but not watched (MaxDirs, MaxDepth, the OS limit)
	Errors      uint64 // unreadable directories and files, failed watches, OS event-queue overflows

	// Limited is true once a directory was left unwatched because MaxDirs
	// or the OS's watch limit was reached.
	Limited   bool
	LastError string // the latest error, with what to do about it where there is something
}

// ErrClosed is returned by Touch after Close.
var ErrClosed = errors.New("watch: watcher closed")

// ErrPendingFull is returned by Touch when MaxPending paths are already
// waiting out their debounce; the event is dropped (and counted).
var ErrPendingFull = errors.New("watch: too many pending paths; event dropped")

// adder is the part of fsnotify.Watcher the Watcher adds and removes
// directory watches through; tests replace it to simulate the OS's limits.
type adder interface {
	Add(path string) error
	Remove(path string) error
}

// hooks are the test seams of start.
type hooks struct {
	wrapAdder func(adder) adder
	events    <-chan fsnotify.Event // replaces fsnotify's Events channel when set
	errs      <-chan error          // replaces fsnotify's Errors channel when set
}

type space struct {
	name string
	root string // as configured, absolute and clean: Event.Path is under it
	real string // root with its symbolic links resolved: what is watched
	ok   bool   // the root exists and is a directory
}

type dirInfo struct {
	sp    *space
	depth int
}

type pending struct {
	sp          *space
	rel         string
	op          Op
	first, last time.Time
}

// ctrl is structural work the worker does: watch a new directory (and
// report the files already in it), or forget a directory that is gone.
type ctrl struct {
	path  string
	sp    *space
	depth int
	gone  bool
}

// Watcher watches the spaces of a Config. Its methods are safe for
// concurrent use.
type Watcher struct {
	debounce, maxWait   time.Duration
	maxDirs, maxDepth   int
	maxPending, maxCtrl int
	ignore              func(string) bool
	spaces              []*space
	byName              map[string]*space
	deliver             func(Event)
	fs                  *fsnotify.Watcher
	add                 adder
	events              <-chan fsnotify.Event
	errs                <-chan error
	raw, delivered      atomic.Uint64
	dropped             atomic.Uint64
	errCount            atomic.Uint64
	wake                chan struct{}
	done                chan struct{}
	closeOnce           sync.Once
	closeErr            error
	wg                  sync.WaitGroup
	stopAfter           atomic.Pointer[func() bool] // set after Start registers it; Close may run first
	mu                  sync.Mutex                  // guards what follows
	dirs                map[string]dirInfo
	reserved            int // directory slots promised to queued walks
	osLimit             int // len(dirs) when the OS refused a watch (0: not reached)
	limited             bool
	skipped             uint64
	lastErr             string
	forgotten           map[string]bool // recently forgotten directories: their late events are dropped
	forgotRing          [256]string     // bounds forgotten
	forgotNext          int
	pend                map[string]*pending
	due                 dueHeap
	ctrl                []ctrl
}

// Start watches cfg's spaces and calls deliver with each debounced event,
// from one goroutine, never concurrently. It returns once the directories
// that exist are watched (up to the limits). The watcher stops when ctx
// ends or Close is called. A space whose root is missing is counted in
// Errors, not watched, and no error of Start's.
func Start(ctx context.Context, cfg Config, deliver func(Event)) (*Watcher, error) {
	return start(ctx, cfg, deliver, hooks{})
}

func start(ctx context.Context, cfg Config, deliver func(Event), h hooks) (*Watcher, error) {
	if deliver == nil {
		return nil, errors.New("watch: deliver is nil")
	}
	if cfg.Debounce < 0 || cfg.MaxDirs < 0 || cfg.MaxDepth < 0 || cfg.MaxPending < 0 {
		return nil, errors.New("watch: a negative limit in Config")
	}
	w := &Watcher{
		debounce:   orDefault(cfg.Debounce, DefaultDebounce),
		maxDirs:    orDefault(cfg.MaxDirs, DefaultMaxDirs),
		maxDepth:   orDefault(cfg.MaxDepth, DefaultMaxDepth),
		maxPending: orDefault(cfg.MaxPending, DefaultMaxPending),
		ignore:     cfg.Ignore,
		byName:     map[string]*space{},
		deliver:    deliver,
		wake:       make(chan struct{}, 1),
		done:       make(chan struct{}),
		dirs:       map[string]dirInfo{},
		forgotten:  map[string]bool{},
		pend:       map[string]*pending{},
	}
	w.maxWait = 5 * w.debounce
	w.maxCtrl = 2*w.maxDirs + 64
	if w.ignore == nil {
		w.ignore = DefaultIgnore
	}
	names := make([]string, 0, len(cfg.Spaces))
	for name := range cfg.Spaces {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		root := cfg.Spaces[name]
		if name == "" || root == "" {
			return nil, fmt.Errorf("watch: space %q: an empty name or root", name)
		}
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("watch: space %s: %w", name, err)
		}
		sp := &space{name: name, root: abs, real: abs}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			sp.real = real
			if fi, err := os.Stat(real); err == nil && fi.IsDir() {
				sp.ok = true
			}
		}
		w.spaces = append(w.spaces, sp)
		w.byName[name] = sp
	}

	fw, err := fsnotify.NewWatcher()
	if err != nil {
		if errors.Is(err, syscall.EMFILE) {
			return nil, fmt.Errorf("watch: %w (the OS limit on inotify instances; raise it with: sysctl fs.inotify.max_user_instances=1024)", err)
		}
		return nil, fmt.Errorf("watch: %w", err)
	}
	w.fs, w.add, w.events, w.errs = fw, fw, fw.Events, fw.Errors
	if h.wrapAdder != nil {
		w.add = h.wrapAdder(fw)
	}
	if h.events != nil {
		w.events = h.events
	}
	if h.errs != nil {
		w.errs = h.errs
	}

	w.wg.Add(2)
	go w.read()
	go w.work()
	stop := context.AfterFunc(ctx, func() { w.Close() })
	w.stopAfter.Store(&stop)

	var roots []ctrl
	for _, sp := range w.spaces {
		if !sp.ok {
			w.fail(fmt.Errorf("space %s: %s is not a directory; it is not watched", sp.name, sp.root))
			continue
		}
		if w.reserve() {
			roots = append(roots, ctrl{path: sp.real, sp: sp})
		}
	}
	w.walk(roots, false)
	if err := ctx.Err(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func orDefault[T time.Duration | int](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Stats returns the watcher's counters now.
func (w *Watcher) Stats() Stats {
	w.mu.Lock()
	s := Stats{
		Dirs:        len(w.dirs),
		Pending:     len(w.pend),
		DirsSkipped: w.skipped,
		Limited:     w.limited,
		LastError:   w.lastErr,
	}
	w.mu.Unlock()
	s.Raw = w.raw.Load()
	s.Delivered = w.delivered.Load()
	s.Dropped = w.dropped.Load()
	s.Errors = w.errCount.Load()
	return s
}

// Close stops the watcher: its goroutines have ended when it returns, and
// pending events are discarded. It waits for a deliver call in progress,
// so deliver must not call it. Close is idempotent.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.done)
		w.wg.Wait()
		w.closeErr = w.fs.Close()
		if stop := w.stopAfter.Load(); stop != nil {
			(*stop)()
		}
	})
	return w.closeErr
}

func (w *Watcher) isDone() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// fail counts err and keeps it as the last error.
func (w *Watcher) fail(err error) {
	w.errCount.Add(1)
	w.mu.Lock()
	w.lastErr = err.Error()
	w.mu.Unlock()
}

func (w *Watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// read drains fsnotify's channels, always: a channel left full stalls the
// OS reader. It does no I/O but an lstat of created paths.
func (w *Watcher) read() {
	defer w.wg.Done()
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.errs:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				err = fmt.Errorf("%w: some events were lost (raise the queue with: sysctl fs.inotify.max_queued_events=65536)", err)
			}
			w.fail(err)
		}
	}
}

func opOf(o fsnotify.Op) Op {
	switch {
	case o.Has(fsnotify.Create):
		return OpCreate
	case o.Has(fsnotify.Remove):
		return OpRemove
	case o.Has(fsnotify.Rename):
		return OpRename
	case o.Has(fsnotify.Write):
		return OpWrite
	}
	return "" // Chmod alone, and the unportable ones AIRS does not ask for
}

// handle turns one raw event into pending work.
func (w *Watcher) handle(ev fsnotify.Event) {
	op := opOf(ev.Op)
	if op == "" {
		return
	}
	name := ev.Name
	w.mu.Lock()
	_, isDir := w.dirs[name]
	parent, inWatched := w.dirs[filepath.Dir(name)]
	if isDir && (op == OpRemove || op == OpRename) {
		w.queue(ctrl{path: name, gone: true})
		w.mu.Unlock()
		return
	}
	if w.forgotten[name] {
		if op == OpRemove || op == OpRename {
			w.mu.Unlock()
			return // a moved directory's own late event, after its parent's
		}
		delete(w.forgotten, name) // the path is in use again
	}
	w.mu.Unlock()
	if !inWatched || isDir {
		return
	}
	rel, ok := relIn(parent.sp.real, name)
	if !ok || rel == "." || w.ignore(rel) {
		return
	}
	if op == OpCreate {
		fi, err := os.Lstat(name)
		switch {
		case err == nil && fi.IsDir():
			w.newDir(name, parent.sp, parent.depth+1)
			return
		case err != nil && !errors.Is(err, os.ErrNotExist):
			w.fail(err)
			return
		}
	}
	w.note(name, parent.sp, rel, op, time.Now())
}

// newDir queues a directory that appeared for the worker to watch, if a
// slot is free.
func (w *Watcher) newDir(path string, sp *space, depth int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if depth > w.maxDepth {
		w.skipped++
		return
	}
	if !w.reserveLocked() {
		return
	}
	if !w.queue(ctrl{path: path, sp: sp, depth: depth}) {
		w.reserved--
		w.skipped++
	}
}

// queue appends c to the worker's structural work (w.mu held).
func (w *Watcher) queue(c ctrl) bool {
	if len(w.ctrl) >= w.maxCtrl {
		w.dropped.Add(1)
		return false
	}
	w.ctrl = append(w.ctrl, c)
	w.signal()
	return true
}

// reserve promises a directory slot to a walk, or counts a skip.
func (w *Watcher) reserve() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reserveLocked()
}

func (w *Watcher) reserveLocked() bool {
	n := len(w.dirs) + w.reserved
	if n >= w.maxDirs || (w.osLimit > 0 && n >= w.osLimit) {
		w.limited = true
		w.skipped++
		return false
	}
	w.reserved++
	return true
}

// work is the one goroutine that calls deliver, adds and removes watches.
func (w *Watcher) work() {
	defer w.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var batch []*pending
	for {
		w.mu.Lock()
		work := w.ctrl
		w.ctrl = nil
		now := time.Now()
		batch = batch[:0]
		for len(w.due) > 0 && !w.due[0].at.After(now) && len(batch) < 256 {
			it := heap.Pop(&w.due).(dueItem)
			p := w.pend[it.path]
			if at := w.dueAt(p); at.After(now) {
				heap.Push(&w.due, dueItem{at: at, path: it.path})
				continue
			}
			delete(w.pend, it.path)
			batch = append(batch, p)
		}
		next := time.Duration(-1)
		if len(w.due) > 0 {
			next = w.due[0].at.Sub(now)
		}
		w.mu.Unlock()

		for i, c := range work {
			if w.isDone() {
				w.mu.Lock()
				for _, c := range work[i:] {
					if !c.gone {
						w.reserved--
					}
				}
				w.mu.Unlock()
				return
			}
			if c.gone {
				w.forget(c.path)
			} else {
				w.walk([]ctrl{c}, true)
			}
		}
		for _, p := range batch {
			if w.isDone() {
				return
			}
			w.flush(p)
		}
		if len(work) > 0 || len(batch) > 0 {
			continue
		}
		if next >= 0 {
			timer.Reset(next)
		}
		select {
		case <-w.done:
			return
		case <-w.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}
