//go:build inproc

package inproc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// ollamaBin is the Ollama binary the e2e setup built (scripts/ollama-build.sh).
func ollamaBin() string {
	cands := []string{os.Getenv("AIRS_OLLAMA_BIN")}
	for _, cache := range []string{os.Getenv("AIRS_E2E_CACHE"), filepath.Join(os.Getenv("HOME"), ".cache", "airs-e2e")} {
		if cache != "" {
			cands = append(cands, filepath.Join(cache, "ollama-v0.17.4", "bin", "ollama"))
		}
	}
	for _, p := range cands {
		if st, err := os.Stat(p); p != "" && err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// ollamaCreate makes a real Ollama store: it starts `ollama serve` with
// OLLAMA_MODELS=store on a free loopback port, runs `ollama create name`
// from gguf, and stops the server.
func ollamaCreate(t *testing.T, bin, store, name, gguf string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close()
	env := append(os.Environ(), "OLLAMA_MODELS="+store, "OLLAMA_HOST="+host, "OLLAMA_NOHISTORY=1")
	var log bytes.Buffer
	srv := exec.Command(bin, "serve")
	srv.Env, srv.Stdout, srv.Stderr = env, &log, &log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := http.Get("http://" + host + "/api/version")
		if err == nil {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama serve did not answer in 30s:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	mf := filepath.Join(t.TempDir(), "Modelfile")
	os.WriteFile(mf, []byte("FROM "+gguf+"\n"), 0o644)
	c := exec.Command(bin, "create", name, "-f", mf)
	c.Env = env
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("ollama create %s: %v\n%s\nserver:\n%s", name, err, out, log.String())
	}
}

func fileSHA(t *testing.T, p string) string {
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	io.Copy(h, f)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestOllamaStoreE2E: the store `ollama create` writes is read the way a
// user's is (manifest → model layer → blob), the blob is the GGUF the model
// was made from, and a selection decoded on it in process is a complete
// call. The store is $AIRS_INPROC_OLLAMA_MODELS with $AIRS_E2E_MODEL when
// both are set (an e2e server's), else one made here with the e2e setup's
// Ollama binary.
func TestOllamaStoreE2E(t *testing.T) {
	gguf := tinyGGUF(t)
	store, name := os.Getenv("AIRS_INPROC_OLLAMA_MODELS"), os.Getenv("AIRS_E2E_MODEL")
	if store == "" || name == "" {
		bin := ollamaBin()
		if bin == "" {
			t.Skip("needs the Ollama binary (scripts/ollama-build.sh; AIRS_OLLAMA_BIN) or AIRS_INPROC_OLLAMA_MODELS and AIRS_E2E_MODEL")
		}
		store, name = t.TempDir(), "airs-test/tiny:e2e"
		ollamaCreate(t, bin, store, name, gguf)
	}
	t.Setenv("OLLAMA_MODELS", store)
	t.Logf("store %s has %v", store, StoreModels(store))
	blob, err := ResolveModel("", name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(blob, filepath.Join(store, "blobs", "sha256-")) {
		t.Fatalf("%s resolved to %s, outside the store's blobs", name, blob)
	}
	// Ollama names a blob by its content's digest: check it is.
	if sum := fileSHA(t, blob); !strings.HasSuffix(blob, sum) {
		t.Fatalf("%s: the blob's sha256 is %s", blob, sum)
	}
	if os.Getenv("AIRS_INPROC_OLLAMA_MODELS") == "" {
		if a, b := fileSHA(t, blob), fileSHA(t, gguf); a != b {
			t.Fatalf("the blob of %s (%s) is not the GGUF it was created from (%s)", name, a, b)
		}
	}
	if _, err := ResolveModel("", strings.TrimSuffix(name, ":e2e")+":missing"); err == nil || !strings.Contains(err.Error(), "ollama pull") {
		t.Fatalf("a tag not in the store: %v", err)
	}

	e, closeE, err := Open(blob, Options{ContextLen: 4096, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer closeE()
	ts := []grammar.ToolSchema{
		{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)},
		{Name: "read-file", Parameters: json.RawMessage(`{"type":"object","properties":{"space":{"type":"string"},"path":{"type":"string"}},"required":["space","path"]}`)},
	}
	format, _, err := selector.FormatFor(ts, true)
	if err != nil {
		t.Fatal(err)
	}
	g, err := grammar.ToolCall(ts, selector.ToolCallGrammar)
	if err != nil {
		t.Fatal(err)
	}
	check := selector.NewOutputChecker(g)
	m := &Model{Engine: e, Name: name}
	var out strings.Builder
	err = m.Generate(context.Background(), selector.ModelRequest{
		Messages: []selector.Message{{Role: "user", Content: "what's 2 * (3 + 4)?"}}, Format: format, NumPredict: 1024,
	}, func(c string) error {
		out.WriteString(c)
		_, err := check.Write([]byte(c))
		return err
	})
	if err != nil {
		t.Fatalf("%v after %q", err, out.String())
	}
	if !check.Complete() {
		t.Fatalf("%q is not a complete call", out.String())
	}
	var call struct {
		Function string `json:"function"`
	}
	if err := json.Unmarshal([]byte(out.String()), &call); err != nil || (call.Function != "calculator" && call.Function != "read-file" && call.Function != grammar.NoneTool) {
		t.Fatalf("%q: function %q, %v", out.String(), call.Function, err)
	}
	t.Logf("%s (from %s): %s", name, blob, out.String())
}
