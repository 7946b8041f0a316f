package watch

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// benchWatcher is a watcher on a space of 1,000 files whose raw events the
// benchmark sends itself.
func benchWatcher(b *testing.B, cfg Config, deliver func(Event)) (chan<- fsnotify.Event, []string) {
	root := b.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	names := make([]string, 1000)
	for i := range names {
		names[i] = filepath.Join(root, fmt.Sprintf("f%04d.txt", i))
		if err := os.WriteFile(names[i], []byte("x"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	events := make(chan fsnotify.Event)
	cfg.Spaces = map[string]string{"s": root}
	w, err := start(b.Context(), cfg, deliver, hooks{events: events})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	return events, names
}

// BenchmarkEventToDeliver is one raw event's way to deliver: the reader,
// the debounce (1ns here), the worker's check that the file is readable
// (lstat, open), deliver.
func BenchmarkEventToDeliver(b *testing.B) {
	got := make(chan struct{})
	events, names := benchWatcher(b, Config{Debounce: time.Nanosecond}, func(Event) { got <- struct{}{} })
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		events <- fsnotify.Event{Name: names[i%len(names)], Op: fsnotify.Write}
		<-got
	}
}

// BenchmarkRawEvent is the reader's cost of one raw event folded into a
// pending path (what a flood costs per event).
func BenchmarkRawEvent(b *testing.B) {
	events, names := benchWatcher(b, Config{Debounce: time.Hour}, func(Event) {})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		events <- fsnotify.Event{Name: names[i%len(names)], Op: fsnotify.Write}
	}
}
