package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/model/inproc"
)

// TestSelectEngineFlag: --engine inproc's errors, in a binary built without
// the tag (make test's): a file that is not GGUF says so, a GGUF says how
// to build the engine, and flag misuse is a usage error.
func TestSelectEngineFlag(t *testing.T) {
	if inproc.Built {
		t.Skip("built with the inproc tag: model/inproc's tests cover --engine inproc")
	}
	e := newEnv(t, "ollama:\n  host: http://127.0.0.1:1\n")
	dir := t.TempDir()
	txt := filepath.Join(dir, "notes.txt")
	os.WriteFile(txt, []byte("not a model"), 0o644)
	e.run("select", "--engine", "inproc", "--gguf", txt, "read hello.txt").expect(t, 1, "", "is not a GGUF model file")
	e.run("select", "--engine", "inproc", "read hello.txt").expect(t, 2, "", "--engine inproc needs the model file")
	e.run("select", "--engine", "llama", "read hello.txt").expect(t, 2, "", `--engine "llama": want ollama or inproc`)
	e.run("select", "--gguf", txt, "read hello.txt").expect(t, 2, "", "--gguf needs --engine inproc")
	gguf := filepath.Join(dir, "m.gguf")
	b := []byte("GGUF\x03\x00\x00\x00")
	b = append(b, make([]byte, 16)...) // no tensors, no keys: no vocabulary
	os.WriteFile(gguf, b, 0o644)
	e.run("select", "--engine", "inproc", "--gguf", gguf, "read hello.txt").expect(t, 1, "", "no tokenizer.ggml.tokens")
}
