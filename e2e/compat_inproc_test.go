//go:build e2e

package e2e

// The compatible endpoints with the in-process engine behind them: `airs
// serve --engine inproc` on the tiny generated GGUF, Ollama nowhere (its
// host in airs.yaml answers nothing), and the official OpenAI and Ollama
// clients (e2e/compat) as in compat_test.go. The airs binary is built with
// the inproc tag by scripts/inproc.sh (cgo, llama.cpp from Go's build
// cache). make e2e runs it unless AIRS_E2E_INPROC=0; alone:
//
//	AIRS_E2E_INPROC=1 DATA_DIR=../shared/data go test -tags e2e -count=1 -run TestCompatClientsInProcess -v ./e2e/

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/tinymodel"
)

// inprocTokenizer is the Qwen3 tokenizer the tiny model is written with,
// where scripts/e2e.sh finds it ("" when there is none).
func inprocTokenizer() string {
	cache := os.Getenv("AIRS_E2E_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "airs-e2e")
	}
	for _, p := range []string{
		os.Getenv("AIRS_TOKENIZER"),
		filepath.Join(os.Getenv("DATA_DIR"), "tokenizers", "qwen3.tokenizer.json.gz"),
		filepath.Join(cache, "tokenizers", "qwen3-3.7.2.tokenizer.json"),
	} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// writeTinyGGUF writes the tiny random model as model/inproc's tests do
// (untied output: a random function of the context, not a repeater of
// its last token).
func writeTinyGGUF(t *testing.T, dir string) string {
	t.Helper()
	tp := inprocTokenizer()
	if tp == "" {
		t.Fatal("no Qwen3 tokenizer for the tiny model: set AIRS_TOKENIZER to a tokenizer.json, or DATA_DIR to the shared data (scripts/e2e.sh fetches one into its cache)")
	}
	tok, err := tinymodel.ReadTokenizerFile(tp, "qwen2")
	if err != nil {
		t.Fatal(err)
	}
	c := tinymodel.DefaultConfig()
	c.TieEmbeddings = false
	path := filepath.Join(dir, c.Name+".gguf")
	if err := tinymodel.Write(path, c, tok); err != nil {
		t.Fatal(err)
	}
	return path
}

// airsInprocBinary builds airs with the in-process engine through
// scripts/inproc.sh (its cgo flags, the headers of the Ollama build).
func airsInprocBinary(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "airs-inproc")
	build := exec.Command("bash", "scripts/inproc.sh", "build", out)
	build.Dir = root()
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("scripts/inproc.sh build (cgo and a C/C++ compiler; AIRS_E2E_INPROC=0 skips this test): %v\n%s", err, b)
	}
	return out
}

// TestCompatClientsInProcess: the model behind the OpenAI and Ollama
// endpoints is the in-process engine. Every call the clients get is
// schema-valid and names a declared tool, streaming yields the same calls
// (greedy decoding, a fixed seed), a tool message continues the
// conversation, and response_format / format give JSON that follows the
// schema.
func TestCompatClientsInProcess(t *testing.T) {
	switch {
	case os.Getenv("AIRS_E2E_INPROC") == "0":
		t.Skip("e2e: AIRS_E2E_INPROC=0")
	case os.Getenv("AIRS_E2E") != "1" && os.Getenv("AIRS_E2E_INPROC") != "1":
		t.Skip("e2e: set AIRS_E2E_INPROC=1 (or run make e2e) to run the clients against airs serve --engine inproc")
	}
	clients := installClients(t)
	dir := t.TempDir()
	gguf := writeTinyGGUF(t, dir)
	bin := airsInprocBinary(t, dir)
	// The engine names the model by its file; the clients send that name.
	model := filepath.Base(gguf)
	e := startServeWith(t, bin, []string{"--engine", "inproc", "--gguf", gguf}, model, clients,
		"ollama:\n  host: http://127.0.0.1:1\n", false)
	e.maxTokens = tinyMaxTokens
	out := e.run(t, "openai_models", "openai_call", "openai_stream", "openai_none", "openai_required", "openai_required_stream",
		"openai_named", "openai_parallel", "openai_continue", "openai_json_schema", "ollama_call", "ollama_stream",
		"ollama_continue", "ollama_format")
	for name, o := range out {
		e.valid(t, name, o.Calls) // a random model, and every call valid
	}
	if o := out["openai_models"]; !slices.Contains(o.IDs, model) {
		t.Errorf("openai_models: %v, want %s among them", o.IDs, model)
	}
	call := out["openai_call"]
	if call.Mode != "model" {
		t.Errorf("openai_call: X-AIRS-Mode %q, want model", call.Mode)
	}
	if s := out["openai_stream"]; !sameCalls(s.Calls, call.Calls) {
		t.Errorf("openai_stream: %+v, not the call %+v", s.Calls, call.Calls)
	}
	// tool_choice required: exactly one call, the same streamed or not;
	// its result, sent back as a tool message, continues the conversation.
	c := out["openai_continue"]
	first := firstCalls(t, c)
	e.valid(t, "openai_continue (first)", first)
	if len(first) != 1 || !strings.HasPrefix(first[0].ID, "call_") {
		t.Errorf("openai_continue: the first reply's calls %+v, want one call with an id", first)
	}
	if s := out["openai_required_stream"]; len(s.Calls) != 1 || !sameCalls(s.Calls, first) || s.Finish != "tool_calls" {
		t.Errorf("openai_required_stream: %+v, not the call %+v", s, first)
	}
	if (c.Content == nil || *c.Content == "") && len(c.Calls) == 0 {
		t.Errorf("openai_continue: after the tool message, neither an answer nor a call: %+v", c)
	}
	if o := out["openai_named"]; len(o.Calls) != 1 || o.Calls[0].Name != "get_time_zone" {
		t.Errorf("openai_named: %+v, want one call of get_time_zone", o)
	}
	if o := out["openai_none"]; len(o.Calls) != 0 || o.Content == nil {
		t.Errorf("openai_none: %+v, want an answer and no call", o)
	}
	if o := out["openai_required"]; len(o.Calls) != 1 {
		t.Errorf("openai_required: %+v, want one call", o)
	}
	distinctIDs(t, "openai_parallel", out["openai_parallel"].Calls)
	oc := out["ollama_call"]
	if s := out["ollama_stream"]; !sameCalls(s.Calls, oc.Calls) || !s.Done {
		t.Errorf("ollama_stream: %+v, not the call %+v", s, oc.Calls)
	}
	if o := out["ollama_continue"]; o.Content == nil && len(o.Calls) == 0 {
		t.Errorf("ollama_continue: neither an answer nor a call: %+v", o)
	}
	validAnswer(t, "openai_json_schema", out["openai_json_schema"])
	validAnswer(t, "ollama_format", out["ollama_format"])
	checkLangChain(t, e, false)
	t.Logf("openai_call %s; openai_parallel %s; openai_continue first %s then %q; openai_json_schema %s", callsText(call.Calls),
		callsText(out["openai_parallel"].Calls), callsText(first), deref(c.Content), deref(out["openai_json_schema"].Content))
}

func callsText(calls []clientCall) string {
	var s []string
	for _, c := range calls {
		s = append(s, c.Name+c.args())
	}
	return "[" + strings.Join(s, " ") + "]"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
