package builtin

import (
	"context"
	"encoding/json"
	"os"

	"github.com/airs-dev/airs/pipeline"
)

// sizedHandler is a space tool's handler that also tells the latency model
// how many bytes a call will read (pipeline.InputSizer): the named file's
// size, which the params' own few bytes do not show.
type sizedHandler struct {
	pipeline.HandlerFunc
	size func(params json.RawMessage) int64
}

func (h sizedHandler) InputSize(params json.RawMessage) int64 { return h.size(params) }

// fileSize is the size of the regular file params name in a folder space,
// found the way the handler finds it (cleanRel, then os.Root, so a link
// out of the space is not followed) with one stat and no read; 0 when the
// space is remote or the file cannot be found, as the handler will then
// answer without reading. It checks no capability: the Manager asks only
// after stage 3 has, and the answer goes to the model, not to the caller.
func (s *spaces) fileSize(params json.RawMessage) int64 {
	var p struct {
		Space string `json:"space"`
		Path  string `json:"path"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return 0
	}
	dir, ok := s.dirs[p.Space]
	if !ok {
		return 0
	}
	rel, err := cleanRel(p.Path)
	if err != nil {
		return 0
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0
	}
	defer root.Close()
	st, err := root.Stat(rel)
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	return st.Size()
}

// readFileSize is what read-file will read: the file, up to max_bytes.
func (s *spaces) readFileSize(params json.RawMessage) int64 {
	p := readParams{MaxBytes: readDefaultMax}
	if json.Unmarshal(params, &p) != nil || p.MaxBytes < 1 || p.MaxBytes > readMaxMax {
		return 0
	}
	return min(s.fileSize(params), p.MaxBytes+1)
}

// pdfFileSize is what pdf-extract will read: the whole file, unless it is
// over the limit and refused unread.
func (s *spaces) pdfFileSize(params json.RawMessage) int64 {
	if n := s.fileSize(params); n <= pdfMaxFile {
		return n
	}
	return 0
}

// sized pairs a space handler with its input size.
func sized(h func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error), size func(json.RawMessage) int64) pipeline.Handler {
	return sizedHandler{HandlerFunc: h, size: size}
}
