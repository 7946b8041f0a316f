//go:build inproc

package inproc

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	cliOnce sync.Once
	cliBin  string
	cliErr  error
	cliOut  []byte
)

// airsInproc builds airs with the inproc tag once (the test's own cgo
// environment: scripts/inproc.sh test sets it).
func airsInproc(t *testing.T) string {
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "airs-inproc-bin")
		if err != nil {
			cliErr = err
			return
		}
		cliBin = filepath.Join(dir, "airs")
		cliOut, cliErr = exec.Command("go", "build", "-tags", "inproc", "-o", cliBin, "../../cmd/airs").CombinedOutput()
	})
	if cliErr != nil {
		t.Fatalf("go build -tags inproc ./cmd/airs: %v\n%s", cliErr, cliOut)
	}
	return cliBin
}

// cliHome is an airs installation whose agent reaches one tool, a
// manifest's list-documents (builtin.list-files over the documents space):
// every call the grammar allows runs, so a turn's call, its result and
// the answer are all the engine's, whatever the random weights choose.
func cliHome(t *testing.T) (config string, env []string) {
	dir := t.TempDir()
	docs := filepath.Join(dir, "docs")
	os.MkdirAll(docs, 0o755)
	os.WriteFile(filepath.Join(docs, "report.txt"), []byte("quarterly report\n"), 0o644)
	manifest := filepath.Join(dir, "local.yaml")
	os.WriteFile(manifest, []byte(`provider: local
tools:
  - name: list-documents
    version: 1.0.0
    description: List the files in the documents folder.
    handler: builtin.list-files
    parameters:
      type: object
      properties:
        space: {enum: [documents]}
        recursive: {type: boolean}
      required: [space]
      additionalProperties: false
    capability_required: ["ReadSpace(documents)"]
    trust: TL3
    latency_class: fast
    idempotent: true
`), 0o644)
	config = filepath.Join(dir, "airs.yaml")
	os.WriteFile(config, []byte(`spaces:
  documents: `+docs+`
manifests: [`+manifest+`]
agents:
  tester:
    capabilities: ["ReadSpace(documents)"]
    providers: [local]
cli:
  users:
    "*": tester
ollama:
  host: http://127.0.0.1:1
`), 0o644)
	env = append(os.Environ(), "AIRS_HOME="+filepath.Join(dir, "state"), "AIRS_CONFIG=", "HOME="+dir)
	return config, env
}

func runAirs(t *testing.T, env []string, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := exec.Command(airsInproc(t), args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// TestChatInProcess: `airs chat --engine inproc` on the tiny GGUF, Ollama
// nowhere: each request gets a call decoded under the grammar (valid: it
// runs), its result, and an answer the in-process model wrote (the
// answers are a random model's text, so the test asserts where they are,
// not what they say).
func TestChatInProcess(t *testing.T) {
	gguf := tinyGGUF(t)
	config, env := cliHome(t)
	requests := []string{"list my documents", "what files are in the documents folder?"}
	out, stderr, err := runAirs(t, env, strings.Join(requests, "\n")+"\n", "--config", config, "chat", "--engine", "inproc", "--gguf", gguf)
	if err != nil {
		t.Fatalf("airs chat: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr)
	}
	calls := regexp.MustCompile(`\[model [^\]]+\] tool: list-documents (\{[^\n]*\})`).FindAllStringSubmatch(out, -1)
	ran := strings.Count(out, "ok: list-documents in ")
	nones := strings.Count(out, "none: no tool fits")
	t.Logf("%d calls, %d ran, %d answered without a tool", len(calls), ran, nones)
	if len(calls) == 0 || ran == 0 {
		t.Fatalf("no call of list-documents ran:\n%s\nstderr:\n%s", out, stderr)
	}
	for _, c := range calls {
		var args struct {
			Space string `json:"space"`
		}
		if err := json.Unmarshal([]byte(c[1]), &args); err != nil || args.Space != "documents" {
			t.Fatalf("call arguments %s: %v", c[1], err)
		}
	}
	if strings.Contains(out, "not run:") && ran == 0 || strings.Contains(stderr, "Ollama") {
		t.Fatalf("a call was not run, or Ollama was needed:\n%s\nstderr:\n%s", out, stderr)
	}
	// After the first call's result, the model's answer: some text of the
	// model's before the next prompt.
	i := strings.Index(out, "ok: list-documents in ")
	rest := out[i:]
	rest = rest[strings.IndexByte(rest, '\n')+1:]
	var answer strings.Builder
	for _, line := range strings.Split(rest, "\n") {
		if strings.HasPrefix(line, ">") {
			break
		}
		if strings.HasPrefix(line, "step ") || strings.HasPrefix(line, "[model") || strings.HasPrefix(line, "note:") || strings.HasPrefix(line, "ok:") {
			continue
		}
		answer.WriteString(line)
	}
	if strings.TrimSpace(answer.String()) == "" {
		t.Fatalf("no answer after the result:\n%s", out)
	}
}

// TestSelectByStoreName: `airs select --engine inproc --model NAME` reads
// the model `ollama create` put in a real store and decodes the call.
func TestSelectByStoreName(t *testing.T) {
	bin := ollamaBin()
	if bin == "" {
		t.Skip("needs the Ollama binary (scripts/ollama-build.sh; AIRS_OLLAMA_BIN)")
	}
	gguf := tinyGGUF(t)
	store := t.TempDir()
	ollamaCreate(t, bin, store, "airs-tiny:cli", gguf)
	config, env := cliHome(t)
	env = append(env, "OLLAMA_MODELS="+store)
	out, stderr, err := runAirs(t, env, "", "--config", config, "select", "--engine", "inproc", "--model", "airs-tiny:cli", "--json", "list my documents")
	if err != nil {
		t.Fatalf("airs select: %v\n%s\n%s", err, out, stderr)
	}
	var sel struct {
		Mode     string `json:"mode"`
		Function string `json:"function"`
		Inproc   *struct {
			Forced int `json:"forced_tokens"`
		} `json:"inproc"`
	}
	if err := json.Unmarshal([]byte(out), &sel); err != nil || sel.Mode != "model" || sel.Inproc == nil || sel.Function == "" {
		t.Fatalf("%v: %s\nstderr:\n%s", err, out, stderr)
	}
	out, stderr, err = runAirs(t, env, "", "--config", config, "select", "--engine", "inproc", "--model", "airs-tiny:other", "list my documents")
	if err == nil || !strings.Contains(stderr, "ollama pull airs-tiny:other") || !strings.Contains(stderr, "airs-tiny:cli") {
		t.Fatalf("a tag not pulled: %v\n%s", err, stderr)
	}
}

// TestServeInProcess: `airs serve --engine inproc`: /v1/chat streams the
// selection, the call's result and the in-process model's answer while a
// /v1/select runs beside it on the same engine.
func TestServeInProcess(t *testing.T) {
	gguf := tinyGGUF(t)
	config, env := cliHome(t)
	sum := sha256.Sum256([]byte("tok-test"))
	raw, _ := os.ReadFile(config)
	os.WriteFile(config, append(raw, []byte("http:\n  tokens:\n    - sha256: "+hex.EncodeToString(sum[:])+"\n      agent: tester\n")...), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(airsInproc(t), "--config", config, "serve", "--engine", "inproc", "--gguf", gguf, "--listen", addr)
	var logs bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		if r, err := http.Get(base + "/healthz"); err == nil {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("airs serve did not answer:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	post := func(path, body string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer tok-test")
		return http.DefaultClient.Do(req)
	}
	selDone := make(chan string, 1)
	go func() {
		r, err := post("/v1/select", `{"text":"what files are in documents?"}`)
		if err != nil {
			selDone <- err.Error()
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		selDone <- fmt.Sprintf("%d %s", r.StatusCode, b)
	}()
	r, err := post("/v1/chat", `{"text":"list my documents"}`)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	counts := map[string]int{}
	var result string
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	ev := ""
	for sc.Scan() {
		if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			ev = e
			counts[e]++
		} else if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && ev == "result" && result == "" {
			result = d
		}
	}
	t.Logf("events %v; result %.200s", counts, result)
	if counts["selection"] == 0 || counts["result"] == 0 || counts["token"] == 0 || counts["done"] != 1 {
		t.Fatalf("want a selection, a result, answer tokens and done: %v\n%s", counts, logs.String())
	}
	if !strings.Contains(result, "report.txt") {
		t.Fatalf("the call's result does not list the space's file: %s", result)
	}
	s := <-selDone
	if !strings.HasPrefix(s, "200 ") || !strings.Contains(s, `"mode":"model"`) {
		t.Fatalf("/v1/select beside the chat: %s", s)
	}
}
