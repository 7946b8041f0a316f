package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// sink collects delivered events.
type sink struct {
	mu     sync.Mutex
	events []Event
	notify chan struct{}
}

func newSink() *sink { return &sink{notify: make(chan struct{}, 1)} }

func (s *sink) deliver(e Event) {
	s.mu.Lock()
	s.events = append(s.events, e)
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *sink) all() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// matching is the events for rel (in any space).
func (s *sink) matching(rel string) []Event {
	var out []Event
	for _, e := range s.all() {
		if e.Rel == rel {
			out = append(out, e)
		}
	}
	return out
}

// waitRel waits up to d for an event for rel, and returns the time it took.
func (s *sink) waitRel(t *testing.T, rel string, d time.Duration) (Event, time.Duration) {
	t.Helper()
	start := time.Now()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if ev := s.matching(rel); len(ev) > 0 {
			return ev[0], time.Since(start)
		}
		select {
		case <-s.notify:
		case <-deadline.C:
			t.Fatalf("no event for %s within %v; got %v", rel, d, s.all())
		}
	}
}

func startT(t *testing.T, cfg Config, h hooks) (*Watcher, *sink) {
	t.Helper()
	s := newSink()
	w, err := start(context.Background(), cfg, s.deliver, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, s
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// realTemp is t.TempDir with its symbolic links resolved.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// goroutinesBack waits (a little) for the goroutine count to fall back to
// before, and fails if it does not.
func goroutinesBack(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("goroutines: %d before, %d after Close\n%s", before, n, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settle waits until no event arrived for quiet, at most max.
func (s *sink) settle(quiet, max time.Duration) {
	end := time.Now().Add(max)
	n := -1
	for time.Now().Before(end) {
		m := len(s.all())
		if m == n {
			return
		}
		n = m
		time.Sleep(quiet)
	}
}

func countGoroutines() int { return runtime.NumGoroutine() }
