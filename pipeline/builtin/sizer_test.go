package builtin

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
)

// builtinHandler is the handler Tools gives for the named tool.
func builtinHandler(t *testing.T, opts Options, name string) pipeline.Handler {
	t.Helper()
	entries, err := Tools(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Tool.Name == name {
			return e.Handler
		}
	}
	t.Fatalf("no builtin %q", name)
	return nil
}

// The file tools tell the latency model what they will read: the named
// file's size (read-file: up to max_bytes), 0 where nothing will be read.
func TestFileToolsInputSize(t *testing.T) {
	_, sp := fixture(t)
	doc := sp["documents"]
	writeFile(t, filepath.Join(doc, "large.txt"), make([]byte, 3<<20))
	opts := Options{Spaces: sp, Policy: pipeline.AllowAll{}}
	for _, tc := range []struct {
		tool, params string
		want         int64
	}{
		{"read-file", `{"space":"documents","path":"a.txt"}`, 12},
		{"read-file", `{"space":"documents","path":"large.txt","max_bytes":4194304}`, 3 << 20},
		{"read-file", `{"space":"documents","path":"large.txt"}`, readDefaultMax + 1}, // stops past max_bytes
		{"read-file", `{"space":"documents","path":"link-in.txt"}`, 12},
		{"read-file", `{"space":"documents","path":"link-out.txt"}`, 0}, // outside the space: refused unread
		{"read-file", `{"space":"documents","path":"../secret/key.txt"}`, 0},
		{"read-file", `{"space":"documents","path":"papers"}`, 0},
		{"read-file", `{"space":"documents","path":"missing.txt"}`, 0},
		{"read-file", `{"space":"nowhere","path":"a.txt"}`, 0},
		{"read-file", `not json`, 0},
		{"pdf-extract", `{"space":"documents","path":"papers/deep/y.pdf"}`, 3},
		{"pdf-extract", `{"space":"downloads","path":"d.txt"}`, 8},
	} {
		h := builtinHandler(t, opts, tc.tool)
		s, ok := h.(pipeline.InputSizer)
		if !ok {
			t.Fatalf("%s's handler %T is no InputSizer", tc.tool, h)
		}
		if got := s.InputSize(json.RawMessage(tc.params)); got != tc.want {
			t.Errorf("%s %s: InputSize %d, want %d", tc.tool, tc.params, got, tc.want)
		}
	}
}

// Through the model: fitted on calls whose time grows with what they
// read, the features of read-file on a large file predict a longer call
// than on a small one, though the two calls' params are the same size.
func TestFileToolsInputSizePredictsLonger(t *testing.T) {
	_, sp := fixture(t)
	doc := sp["documents"]
	writeFile(t, filepath.Join(doc, "s.txt"), make([]byte, 1<<10))
	writeFile(t, filepath.Join(doc, "l.txt"), make([]byte, 1<<20))
	h := builtinHandler(t, Options{Spaces: sp, Policy: pipeline.AllowAll{}}, "read-file").(pipeline.InputSizer)
	// The payload feature as the Manager builds it: the params' bytes plus
	// the handler's InputSize.
	features := func(params string) scoring.LatencyFeatures {
		n := len(params) + int(h.InputSize(json.RawMessage(params)))
		return scoring.MakeLatencyFeatures(int(pipeline.RuntimeInProcess), 0.2, n, 0, 2*time.Millisecond)
	}
	m := scoring.NewOnlineLatency(scoring.OnlineLatencyConfig{MinSamples: 32})
	for i := range 128 {
		kib := 1 << (i % 11) // 1 KiB .. 1 MiB
		x := scoring.MakeLatencyFeatures(int(pipeline.RuntimeInProcess), 0.2, kib<<10+40, 0, 2*time.Millisecond)
		if m.Observe(&x, time.Millisecond+time.Duration(kib)*20*time.Microsecond) {
			m.Refit()
		}
	}
	m.Refit()
	small, large := features(`{"space":"documents","path":"s.txt"}`), features(`{"space":"documents","path":"l.txt"}`)
	ds, _, ok1 := m.Predict(&small)
	dl, _, ok2 := m.Predict(&large)
	if !ok1 || !ok2 {
		t.Fatalf("model not ready")
	}
	if dl < 5*ds {
		t.Fatalf("predicted %v for 1 KiB and %v for 1 MiB: the named file's size is not in the features", ds, dl)
	}
}
