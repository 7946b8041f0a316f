package httpapi

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/demodata"
)

// From a PDF written into a space four agents share to the last of their
// four suggestions on their streams, through the served engine (the
// watcher's debounce included): the time a user waits for a dropped file.
func BenchmarkSharedSpaceFileToEverySuggestion(b *testing.B) {
	dir := b.TempDir()
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		b.Fatal(err)
	}
	// No limit within the run: the benchmark measures the path, not the
	// per-minute bound.
	_, e := newSharedServed(b, dir, `home: ./state
spaces:
  documents: ./docs
agents:
  a1: {capabilities: ["ReadSpace(documents)"]}
  a2: {capabilities: ["ReadSpace(documents)"]}
  a3: {capabilities: ["ReadSpace(*)"]}
  a4: {capabilities: ["ReadSpace(documents)"]}
recommend: {per_minute: 1000000, max_active: 1000000}
`)
	agents := []string{"a1", "a2", "a3", "a4"}
	streams := subscribeAll(b, e, agents...)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("f%d.pdf", i)
		if err := demodata.WritePDF(filepath.Join(docs, name), []string{"Invoice", "Total 9"}); err != nil {
			b.Fatal(err)
		}
		for _, a := range agents {
			select {
			case u := <-streams[a]:
				if u.Type != "new" || !strings.Contains(string(u.Recommendation.Arguments), `"`+name+`"`) {
					b.Fatalf("%s: %s %s, want the suggestion for %s", a, u.Type, u.Recommendation.Arguments, name)
				}
			case <-time.After(30 * time.Second):
				b.Fatalf("%s: no suggestion for %s", a, name)
			}
		}
	}
}
