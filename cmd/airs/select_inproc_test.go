package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
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
	e.run("select", "--engine", "inproc", "read hello.txt").expect(t, 2, "", "--engine inproc needs the model: --gguf FILE or --model NAME")
	e.run("select", "--engine", "inproc", "--gguf", txt, "--model", "q", "read hello.txt").expect(t, 2, "", "--gguf and --model both name the model")
	e.run("select", "--engine", "llama", "read hello.txt").expect(t, 2, "", `--engine "llama": want ollama or inproc`)
	e.run("select", "--gguf", txt, "read hello.txt").expect(t, 2, "", "--gguf needs --engine inproc")
	gguf := filepath.Join(dir, "m.gguf")
	b := []byte("GGUF\x03\x00\x00\x00")
	b = append(b, make([]byte, 16)...) // no tensors, no keys: no vocabulary
	os.WriteFile(gguf, b, 0o644)
	e.run("select", "--engine", "inproc", "--gguf", gguf, "read hello.txt").expect(t, 1, "", "no tokenizer.ggml.tokens")

	// --model NAME reads Ollama's store: the manifest's model layer is the
	// file Open checks (here not a GGUF, so the message is Preflight's).
	store := filepath.Join(dir, "models")
	blob := filepath.Join(store, "blobs", "sha256-"+strings.Repeat("ab", 32))
	os.MkdirAll(filepath.Dir(blob), 0o755)
	os.WriteFile(blob, []byte("not a model"), 0o644)
	man := filepath.Join(store, "manifests", "registry.ollama.ai", "library", "tiny", "latest")
	os.MkdirAll(filepath.Dir(man), 0o755)
	os.WriteFile(man, []byte(`{"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:`+strings.Repeat("ab", 32)+`"}]}`), 0o644)
	t.Setenv("OLLAMA_MODELS", store)
	e.run("select", "--engine", "inproc", "--model", "tiny", "read hello.txt").expect(t, 1, "", blob+" is not a GGUF model file")
	e.run("select", "--engine", "inproc", "--model", "tiny:4b", "read hello.txt").expect(t, 1, "", "`ollama pull tiny:4b` (the store has tiny:latest)")
	// model.name in airs.yaml is the same lookup; --gguf overrides it.
	byName := newEnv(t, "ollama:\n  host: http://127.0.0.1:1\nmodel:\n  engine: inproc\n  name: tiny\n")
	byName.run("select", "read hello.txt").expect(t, 1, "", blob+" is not a GGUF model file")
	byName.run("select", "--gguf", gguf, "read hello.txt").expect(t, 1, "", "no tokenizer.ggml.tokens")
	byName.run("select", "--model", "none", "read hello.txt").expect(t, 0, "no-LLM mode", "")
	t.Setenv("OLLAMA_MODELS", filepath.Join(dir, "nowhere"))
	e.run("select", "--engine", "inproc", "--model", "tiny", "read hello.txt").expect(t, 1, "", "(OLLAMA_MODELS)")
}

// vocabGGUF writes a GGUF that holds only a vocabulary: Preflight accepts
// it, so what follows is the binary's own answer.
func vocabGGUF(t *testing.T, path string) {
	t.Helper()
	var b []byte
	u32 := func(x uint32) { b = binary.LittleEndian.AppendUint32(b, x) }
	u64 := func(x uint64) { b = binary.LittleEndian.AppendUint64(b, x) }
	str := func(s string) { u64(uint64(len(s))); b = append(b, s...) }
	b = append(b, "GGUF"...)
	u32(3)
	u64(0) // tensors
	u64(1) // keys
	str("tokenizer.ggml.tokens")
	u32(9) // array
	u32(8) // of strings
	u64(3)
	for _, s := range []string{"a", "b", "c"} {
		str(s)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEngineFlagChannels: chat, serve and run take --engine inproc as
// select does; a binary without the tag exits 1 saying how to build one,
// and a misused flag is a usage error.
func TestEngineFlagChannels(t *testing.T) {
	if inproc.Built {
		t.Skip("built with the inproc tag")
	}
	e := newEnv(t, "ollama:\n  host: http://127.0.0.1:1\n")
	dir := t.TempDir()
	gguf := filepath.Join(dir, "v.gguf")
	vocabGGUF(t, gguf)
	pipe := filepath.Join(dir, "p.yaml")
	os.WriteFile(pipe, []byte("pipeline: p\nsteps:\n  - id: a\n    tool: calculator\n    params: {expression: \"1+1\"}\noutput: \"{{steps.a.output}}\"\n"), 0o644)
	build := "build airs with `go build -tags inproc ./cmd/airs`"
	e.run("select", "--engine", "inproc", "--gguf", gguf, "read hello.txt").expect(t, 1, "", build)
	e.runStdin("", "chat", "--engine", "inproc", "--gguf", gguf).expect(t, 1, "", build)
	e.run("serve", "--engine", "inproc", "--gguf", gguf, "--listen", "127.0.0.1:0").expect(t, 1, "", build)
	e.run("run", pipe, "--engine", "inproc", "--gguf", gguf).expect(t, 1, "", build)
	e.run("run", pipe, "--gguf", gguf).expect(t, 2, "", "--gguf and --model need --engine inproc")
	e.runStdin("", "chat", "--gguf", gguf).expect(t, 2, "", "--gguf needs --engine inproc")
	e.runStdin("", "chat", "--engine", "inproc", "--model", "none", "--gguf", gguf).expect(t, 2, "", "the no-LLM mode loads no model")
	// --model none with the engine in airs.yaml: no-LLM mode, nothing loaded.
	r := e.run("run", pipe, "--engine", "inproc", "--model", "none")
	r.expect(t, 0, "2", "")
}
