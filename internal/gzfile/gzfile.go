// Package gzfile opens data files that may be gzip-compressed: corpora,
// benchmark samples and vocabularies ship both ways, and the content (the
// gzip magic bytes), not the name, says which.
package gzfile

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// Open opens path for reading, gunzipping it when it starts with the gzip
// magic bytes. Close closes both the decompressor and the file.
func Open(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return readCloser{r, func() error { r.Close(); return f.Close() }}, nil
}

// NewReader reads r, gunzipping it when it starts with the gzip magic
// bytes. Its Close closes the decompressor, not r.
func NewReader(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		return zr, nil
	}
	return io.NopCloser(br), nil
}

type readCloser struct {
	io.Reader
	close func() error
}

func (rc readCloser) Close() error { return rc.close() }
