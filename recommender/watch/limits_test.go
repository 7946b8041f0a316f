package watch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/goleak"
)

// flood rewrites files (held open: one write, one raw event) in a tight
// loop until stop is closed, and returns the writes made.
func flood(t *testing.T, dir string, files int, stop <-chan struct{}) (int, func()) {
	t.Helper()
	fds := make([]*os.File, files)
	for i := range fds {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("f%04d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		fds[i] = f
	}
	closeAll := func() {
		for _, f := range fds {
			f.Close()
		}
	}
	n := 0
	b := []byte{'x'}
	for {
		select {
		case <-stop:
			return n, closeAll
		default:
		}
		for _, f := range fds {
			f.WriteAt(b, 0)
		}
		n += files
	}
}

// A flood of events is debounced and bounded: Pending never exceeds
// MaxPending, the excess is counted as Dropped, deliveries are far fewer
// than raw events, and Close leaves no goroutine behind.
func TestFlood(t *testing.T) {
	before := runtime.NumGoroutine()
	leaks := goleak.IgnoreCurrent()
	root := realTemp(t)
	const maxPending = 100
	var delivered atomic.Int64
	w, err := start(t.Context(), Config{Spaces: map[string]string{"s": root}, Debounce: 100 * time.Millisecond, MaxPending: maxPending},
		func(Event) { delivered.Add(1) }, hooks{})
	if err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var maxSeen atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // sample Pending while the flood runs
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
			if p := int64(w.Stats().Pending); p > maxSeen.Load() {
				maxSeen.Store(p)
			}
		}
	})
	start := time.Now()
	go func() { // 1.5 s of flood and at least 15,000 writes (a slow machine: up to 5 s)
		time.Sleep(1500 * time.Millisecond)
		for w.Stats().Raw < 15000 && time.Since(start) < 5*time.Second {
			time.Sleep(50 * time.Millisecond)
		}
		close(stop)
	}()
	writes, closeFiles := flood(t, root, 300, stop)
	took := time.Since(start)
	wg.Wait()
	closeFiles()
	time.Sleep(700 * time.Millisecond) // the last pending paths come due

	st := w.Stats()
	t.Logf("%d writes in %v (%.0f/s); stats %+v; max pending seen %d", writes, took, float64(writes)/took.Seconds(), st, maxSeen.Load())
	if rate := float64(st.Raw) / took.Seconds(); rate < 10000 {
		t.Errorf("only %.0f raw events/s reached the watcher; the test wants a flood of ≥ 10,000/s", rate)
	}
	if maxSeen.Load() > maxPending || st.Pending > maxPending {
		t.Errorf("pending reached %d; MaxPending is %d", maxSeen.Load(), maxPending)
	}
	if maxSeen.Load() < maxPending/2 {
		t.Errorf("pending peaked at %d: the flood did not fill it", maxSeen.Load())
	}
	if st.Dropped == 0 {
		t.Error("nothing was dropped, with 300 files rewritten and MaxPending 100")
	}
	if st.Delivered == 0 || st.Delivered*20 > st.Raw || uint64(delivered.Load()) != st.Delivered {
		t.Errorf("delivered %d (counted %d) of %d raw events; want > 0 and far fewer", delivered.Load(), st.Delivered, st.Raw)
	}
	if st.Raw < uint64(10000) {
		t.Errorf("raw events %d", st.Raw)
	}

	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Close() // idempotent
	goroutinesBack(t, before)
	if err := goleak.Find(leaks); err != nil {
		t.Error(err)
	}
}

// Close during a flood, with a slow deliver, returns promptly.
func TestCloseDuringFlood(t *testing.T) {
	before := runtime.NumGoroutine()
	root := realTemp(t)
	w, err := start(t.Context(), Config{Spaces: map[string]string{"s": root}, Debounce: 20 * time.Millisecond},
		func(Event) { time.Sleep(2 * time.Millisecond) }, hooks{})
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan func())
	go func() {
		_, closeFiles := flood(t, root, 200, stop)
		done <- closeFiles
	}()
	time.Sleep(500 * time.Millisecond)
	if st := w.Stats(); st.Delivered == 0 || st.Raw < 1000 {
		t.Errorf("no flood under way: %+v", st)
	}
	start := time.Now()
	w.Close()
	took := time.Since(start)
	close(stop)
	(<-done)()
	if took > 500*time.Millisecond {
		t.Errorf("Close took %v during a flood", took)
	}
	goroutinesBack(t, before)
}

// The fsnotify channels are drained even while deliver is stuck: the
// reader never waits for the worker.
func TestChannelsDrained(t *testing.T) {
	root := realTemp(t)
	writeFile(t, filepath.Join(root, "first.txt"), "x")
	events := make(chan fsnotify.Event) // unbuffered, like fsnotify's
	errs := make(chan error)
	stuck, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w, err := start(t.Context(), Config{Spaces: map[string]string{"s": root}, Debounce: 10 * time.Millisecond, MaxPending: 500},
		func(Event) {
			once.Do(func() { close(stuck) })
			<-release
		}, hooks{events: events, errs: errs})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	defer close(release)

	events <- fsnotify.Event{Name: filepath.Join(root, "first.txt"), Op: fsnotify.Write}
	select {
	case <-stuck:
	case <-time.After(2 * time.Second):
		t.Fatal("deliver was not called")
	}
	deadline := time.After(10 * time.Second)
	for i := range 20000 {
		select {
		case events <- fsnotify.Event{Name: filepath.Join(root, fmt.Sprintf("n%d.txt", i)), Op: fsnotify.Write}:
		case <-deadline:
			t.Fatalf("event %d: the reader stopped draining while deliver is stuck", i)
		}
	}
	for i := range 100 {
		select {
		case errs <- fmt.Errorf("error %d", i):
		case <-deadline:
			t.Fatalf("error %d: the reader stopped draining", i)
		}
	}
	events <- fsnotify.Event{Name: filepath.Join(root, "last.txt"), Op: fsnotify.Chmod} // a round trip: the errors are counted
	st := w.Stats()
	if st.Errors != 100 || st.LastError != "error 99" || st.Pending != 500 || st.Dropped != 20000-500 {
		t.Errorf("stats %+v; want 100 errors, 500 pending, %d dropped", st, 20000-500)
	}

	// An overflow says what to raise.
	errs <- fsnotify.ErrEventOverflow
	events <- fsnotify.Event{Name: filepath.Join(root, "last.txt"), Op: fsnotify.Chmod}
	if st := w.Stats(); !strings.Contains(st.LastError, "fs.inotify.max_queued_events") {
		t.Errorf("after an overflow, LastError = %q", st.LastError)
	}
}

// limitAdder lets limit watches live, then fails like inotify at
// fs.inotify.max_user_watches (ENOSPC); refuse fails some paths with
// their own error.
type limitAdder struct {
	inner  adder
	limit  int
	mu     sync.Mutex
	live   map[string]bool
	calls  int
	refuse map[string]error
}

func (a *limitAdder) Add(p string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls++
	if err := a.refuse[filepath.Base(p)]; err != nil {
		return err
	}
	if a.limit > 0 && len(a.live) >= a.limit {
		return syscall.ENOSPC // what fsnotify returns: inotify_add_watch's errno
	}
	if err := a.inner.Add(p); err != nil {
		return err
	}
	a.live[p] = true
	return nil
}

func (a *limitAdder) Remove(p string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.live, p)
	return a.inner.Remove(p)
}

func (a *limitAdder) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.calls
}

// The OS's watch limit: adding stops, Limited is set, LastError names the
// sysctl, what is watched is still delivered, and a slot freed by a
// removed directory is used again.
func TestOSWatchLimit(t *testing.T) {
	root := realTemp(t)
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		mkdir(t, filepath.Join(root, d))
	}
	fake := &limitAdder{limit: 3, live: map[string]bool{}}
	w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond},
		hooks{wrapAdder: func(a adder) adder { fake.inner = a; return fake }})
	st := w.Stats()
	if st.Dirs != 3 || !st.Limited || st.DirsSkipped != 3 || st.Errors != 1 {
		t.Errorf("stats %+v; want 3 dirs, Limited, 3 skipped, 1 error", st)
	}
	if !strings.Contains(st.LastError, "sysctl fs.inotify.max_user_watches=") || !strings.Contains(st.LastError, "no space left on device") {
		t.Errorf("LastError %q does not say what happened and what to raise", st.LastError)
	}
	if fake.count() != 4 {
		t.Errorf("%d adds; want 4 (the last refused, then no more tries)", fake.count())
	}

	var watched []string // the two of a..e that got watches
	for _, d := range []string{"a", "b", "c", "d", "e"} {
		fake.mu.Lock()
		ok := fake.live[filepath.Join(root, d)]
		fake.mu.Unlock()
		if ok {
			watched = append(watched, d)
		}
	}
	if len(watched) != 2 {
		t.Fatalf("watched %v", watched)
	}
	writeFile(t, filepath.Join(root, watched[0], "x.txt"), "x")
	s.waitRel(t, filepath.Join(watched[0], "x.txt"), 2*time.Second)
	mkdir(t, filepath.Join(root, "f"))
	time.Sleep(100 * time.Millisecond)
	writeFile(t, filepath.Join(root, "f", "y.txt"), "y")
	writeFile(t, filepath.Join(root, "z.txt"), "z")
	s.waitRel(t, "z.txt", 2*time.Second)
	if st := w.Stats(); st.DirsSkipped != 4 || fake.count() != 4 {
		t.Errorf("stats %+v, %d adds; the new f is skipped without a try", st, fake.count())
	}
	if got := s.matching(filepath.Join("f", "y.txt")); len(got) != 0 {
		t.Errorf("an event from an unwatched directory: %v", got)
	}

	// Removing a watched directory frees a slot for a new one.
	os.RemoveAll(filepath.Join(root, watched[1]))
	time.Sleep(150 * time.Millisecond)
	mkdir(t, filepath.Join(root, "g"))
	time.Sleep(150 * time.Millisecond)
	writeFile(t, filepath.Join(root, "g", "w.txt"), "w")
	s.waitRel(t, filepath.Join("g", "w.txt"), 2*time.Second)
	if st := w.Stats(); st.Dirs != 3 {
		t.Errorf("stats %+v; want 3 dirs again", st)
	}
}

// makeTree makes dirs directories of files files each under root: one
// empty file per directory, and hard links to it (a link is many times
// cheaper to make than a file, and is a directory entry all the same).
func makeTree(t testing.TB, root string, dirs, files int) {
	for d := range dirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		first := filepath.Join(dir, "f0000")
		if err := os.WriteFile(first, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for f := 1; f < files; f++ {
			if err := os.Link(first, filepath.Join(dir, fmt.Sprintf("f%04d", f))); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// A space of many files starts in bounded time and memory; MaxDirs limits
// the watches (Limited, DirsSkipped) and the rest works. 20,000 files
// always; 100,000 unless -short.
func TestLargeSpace(t *testing.T) {
	for _, size := range []struct{ dirs, files int }{{100, 200}, {500, 200}} {
		t.Run(fmt.Sprintf("%d files", size.dirs*size.files), func(t *testing.T) {
			if size.dirs == 500 && testing.Short() {
				t.Skip("100,000 files: not with -short")
			}
			root := realTemp(t)
			made := time.Now()
			makeTree(t, root, size.dirs, size.files)
			t.Logf("made %d files in %v", size.dirs*size.files, time.Since(made))

			before := heapInUse()
			began := time.Now()
			w, s := startT(t, Config{Spaces: map[string]string{"big": root}, Debounce: 50 * time.Millisecond}, hooks{})
			took := time.Since(began)
			grew := int64(heapInUse()) - int64(before)
			t.Logf("all watched: Start took %v, heap grew %d KB", took, grew/1024)
			if st := w.Stats(); st.Dirs != size.dirs+1 || st.Limited || st.Errors != 0 {
				t.Errorf("stats %+v", st)
			}
			if took > 15*time.Second {
				t.Errorf("Start took %v", took)
			}
			if grew > 8<<20 {
				t.Errorf("the heap grew %d bytes for %d watched directories", grew, size.dirs+1)
			}
			last := filepath.Join(fmt.Sprintf("d%03d", size.dirs-1), "new.txt")
			writeFile(t, filepath.Join(root, last), "x")
			s.waitRel(t, last, 2*time.Second)
			w.Close()

			const maxDirs = 50
			began = time.Now()
			w, s = startT(t, Config{Spaces: map[string]string{"big": root}, Debounce: 50 * time.Millisecond, MaxDirs: maxDirs}, hooks{})
			t.Logf("MaxDirs %d: Start took %v", maxDirs, time.Since(began))
			st := w.Stats()
			if st.Dirs != maxDirs || !st.Limited || st.DirsSkipped != uint64(size.dirs+1-maxDirs) {
				t.Errorf("stats %+v; want %d dirs, Limited, %d skipped", st, maxDirs, size.dirs+1-maxDirs)
			}
			var watched, unwatched string
			for d := range size.dirs {
				name := fmt.Sprintf("d%03d", d)
				w.mu.Lock()
				_, ok := w.dirs[filepath.Join(root, name)]
				w.mu.Unlock()
				if ok {
					watched = name
				} else {
					unwatched = name
				}
			}
			writeFile(t, filepath.Join(root, watched, "seen.txt"), "x")
			writeFile(t, filepath.Join(root, unwatched, "unseen.txt"), "x")
			mkdir(t, filepath.Join(root, "newdir"))
			writeFile(t, filepath.Join(root, "top.txt"), "x")
			s.waitRel(t, filepath.Join(watched, "seen.txt"), 2*time.Second)
			s.waitRel(t, "top.txt", 2*time.Second)
			s.settle(150*time.Millisecond, 2*time.Second)
			if got := s.matching(filepath.Join(unwatched, "unseen.txt")); len(got) != 0 {
				t.Errorf("an event from a directory beyond MaxDirs: %v", got)
			}
			if st := w.Stats(); st.DirsSkipped != uint64(size.dirs+2-maxDirs) || st.Dirs != maxDirs {
				t.Errorf("stats %+v; newdir should be skipped too", st)
			}
		})
	}
}

// Unreadable directories and files never stop the watcher; they are
// counted in Errors. The OS's refusal is simulated always; chmod 000 is
// real, and needs a user without CAP_DAC_OVERRIDE: as root the test runs
// itself again as nobody (uid 65534), and skips that sub-case only if it
// cannot.
func TestUnreadable(t *testing.T) {
	t.Run("refused watch", func(t *testing.T) {
		root := realTemp(t)
		mkdir(t, filepath.Join(root, "locked", "below"))
		mkdir(t, filepath.Join(root, "open"))
		fake := &limitAdder{live: map[string]bool{}, refuse: map[string]error{"locked": syscall.EACCES}}
		w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond},
			hooks{wrapAdder: func(a adder) adder { fake.inner = a; return fake }})
		st := w.Stats()
		if st.Errors != 1 || st.Dirs != 2 || !strings.Contains(st.LastError, "locked cannot be watched: permission denied") {
			t.Errorf("stats %+v", st)
		}
		writeFile(t, filepath.Join(root, "open", "a.txt"), "x")
		s.waitRel(t, filepath.Join("open", "a.txt"), 2*time.Second)
	})

	t.Run("chmod 000", func(t *testing.T) {
		if os.Geteuid() == 0 {
			runAsNobody(t, "^TestUnreadable$/^chmod_000$")
			return
		}
		root := realTemp(t)
		locked := filepath.Join(root, "locked")
		mkdir(t, filepath.Join(locked, "below"))
		writeFile(t, filepath.Join(root, "secret.txt"), "x")
		for _, p := range []string{locked, filepath.Join(root, "secret.txt")} {
			if err := os.Chmod(p, 0); err != nil {
				t.Fatal(err)
			}
		}
		t.Cleanup(func() { os.Chmod(locked, 0o755); os.Chmod(filepath.Join(root, "newlocked"), 0o755) })
		w, s := startT(t, Config{Spaces: map[string]string{"s": root}, Debounce: 50 * time.Millisecond}, hooks{})
		if st := w.Stats(); st.Errors != 1 || st.Dirs != 1 || !strings.Contains(st.LastError, "permission denied") {
			t.Errorf("at start: %+v", st)
		}

		// A file created unreadable, a directory created unreadable, an
		// open of an unreadable file, and a good file.
		f, err := os.OpenFile(filepath.Join(root, "new000.txt"), os.O_CREATE|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("written through the fd that created it")
		f.Close()
		if err := os.Mkdir(filepath.Join(root, "newlocked"), 0); err != nil {
			t.Fatal(err)
		}
		if err := w.Touch("s", "secret.txt", OpOpen); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		writeFile(t, filepath.Join(root, "ok.txt"), "x")
		s.waitRel(t, "ok.txt", 2*time.Second)
		s.settle(150*time.Millisecond, 2*time.Second)
		if got := s.all(); len(got) != 1 {
			t.Errorf("events %v; want only ok.txt", got)
		}
		if st := w.Stats(); st.Errors != 4 || st.Dirs != 1 {
			t.Errorf("stats %+v; want 4 errors: locked, new000.txt, newlocked, secret.txt", st)
		}
	})
}

// runAsNobody runs this test binary's run pattern as uid 65534, or skips.
func runAsNobody(t *testing.T, run string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("as root, and the test binary cannot be found to run as nobody: %v", err)
	}
	dir, err := os.MkdirTemp("", "watch-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "watch.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run="+run, "-test.v", "-test.count=1")
	cmd.Dir = dir
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o1777)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Skipf("as root, and cannot run the test as nobody (uid 65534): %v", err)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnreadable/chmod_000") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	t.Logf("ran as nobody (uid 65534):\n%s", out)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
