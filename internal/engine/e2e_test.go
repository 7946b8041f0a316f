//go:build e2e

package engine_test

// End-to-end tests of the engine against a real Ollama server running the
// tiny random-weight model of internal/tinymodel. scripts/e2e.sh (make e2e)
// builds and starts the server and exports OLLAMA_HOST and AIRS_E2E_MODEL;
// without OLLAMA_HOST these tests skip.
//
// With random weights the model's choices mean nothing: the tests assert
// what must hold whatever it emits — every returned call is valid against
// its tool's schema and names a tool (and a space) the caller may use, the
// output stops where the grammar ends, failures are clear errors and
// nothing is half-recorded — not accuracy.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/internal/tinymodel"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/session"
)

// e2eServer returns the server's address and the tiny model's name, or
// skips when no server was started for the tests.
func e2eServer(t *testing.T) (host, model string) {
	t.Helper()
	host = os.Getenv("OLLAMA_HOST")
	if host == "" {
		t.Skip("e2e: OLLAMA_HOST is not set; run `bash scripts/e2e.sh ./internal/engine/` (make e2e), which starts Ollama with the tiny model")
	}
	model = os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	return host, model
}

const (
	alice = "alice" // may read space docs only, no network
	root  = "root"  // may read every space and use the network
)

// webFetch is a tool alice may not call: it needs Network(*).
func webFetch() pipeline.Tool {
	return pipeline.Tool{
		Name:    "web-fetch",
		Version: "1.0.0",
		Description: "Fetch a web page or a document from the internet by its URL and return its text. " +
			"Use it to download pages, read online articles, or get the pricing page of a website.",
		Parameters: json.RawMessage(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"url": {"type": "string", "minLength": 8, "maxLength": 2048, "pattern": "^https?://", "description": "The address to fetch."},
				"max_bytes": {"type": "integer", "minimum": 1, "maximum": 1048576, "description": "Read at most this many bytes."}
			},
			"required": ["url"],
			"additionalProperties": false
		}`),
		CapabilityRequired: []pipeline.Capability{{Kind: "Network", Arg: "*"}},
		Trust:              pipeline.TL2,
		Idempotent:         true,
	}
}

type env struct {
	dir    string
	cfg    *config.Config
	reg    *pipeline.Registry
	engine *engine.Engine
}

// boundedTools are tools whose every argument is bounded (enums, small
// integers, short strings): a model under the grammar must finish a call
// of them in a few tokens, where a random model loses itself in the
// builtin tools' long free-text strings.
func boundedTools() []pipeline.Tool {
	return []pipeline.Tool{{
		Name:        "set-timer",
		Version:     "1.0.0",
		Description: "Set a countdown timer for a number of minutes, with a label such as tea or pasta.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {
				"minutes": {"type": "integer", "minimum": 1, "maximum": 120},
				"label": {"enum": ["tea", "pasta", "laundry", "meeting"]}
			},
			"required": ["minutes", "label"], "additionalProperties": false}`),
		Trust: pipeline.TL3, Idempotent: true,
	}, {
		Name:        "convert-units",
		Version:     "1.0.0",
		Description: "Convert a length between units: meters, feet, miles, kilometers.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {
				"value": {"type": "integer", "minimum": 0, "maximum": 100000},
				"from": {"enum": ["m", "ft", "mi", "km"]},
				"to": {"enum": ["m", "ft", "mi", "km"]}
			},
			"required": ["value", "from", "to"], "additionalProperties": false}`),
		Trust: pipeline.TL3, Idempotent: true,
	}, {
		Name:        "weather",
		Version:     "1.0.0",
		Description: "Get the weather forecast for a city for the next few days.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {
				"city": {"type": "string", "minLength": 1, "maxLength": 12, "pattern": "^[A-Za-z ]+$"},
				"days": {"type": "integer", "minimum": 1, "maximum": 7}
			},
			"required": ["city"], "additionalProperties": false}`),
		Trust: pipeline.TL2, Idempotent: true,
	}}
}

// newEngine wires an engine the way cmd/airs does: a temp home, two spaces
// with files (docs, secret), the builtin tools (or, with bounded, the
// boundedTools) plus web-fetch, and the given Ollama host and model.
func newEngine(t *testing.T, host, model string, recording, bounded bool) *env {
	t.Helper()
	dir := t.TempDir()
	docs, secret := filepath.Join(dir, "docs"), filepath.Join(dir, "secret")
	for _, d := range []string{docs, filepath.Join(docs, "papers"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, lines := range map[string][]string{
		"papers/attention.pdf": {"Attention is all you need.", "The transformer uses self-attention."},
		"papers/bert.pdf":      {"BERT: pre-training of deep bidirectional transformers."},
		"pricing-2024.pdf":     {"Pricing 2024", "Basic plan: 10 USD per month.", "Pro plan: 25 USD per month."},
		"pricing-2025.pdf":     {"Pricing 2025", "Basic plan: 12 USD per month.", "Pro plan: 30 USD per month."},
	} {
		if err := demodata.WritePDF(filepath.Join(docs, name), lines); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(docs, "notes.txt"), []byte("Buy milk.\nCall Bob about the budget.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secret, "passwords.txt"), []byte("hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`home: %s
spaces:
  docs: %s
  secret: %s
agents:
  %s:
    capabilities: ["ReadSpace(docs)"]
  %s:
    capabilities: ["ReadSpace(*)", "Network(*)"]
cli:
  users:
    "*": %s
ollama:
  host: %s
  model: %q
recording:
  enabled: %v
`, filepath.Join(dir, "home"), docs, secret, alice, root, alice, host, model, recording)
	t.Setenv("AIRS_HOME", "")
	cfg, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	policy := settings.Policy(cfg)
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	fixed := pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"text":"offline"}`), nil
	})
	if bounded {
		for _, tool := range boundedTools() {
			if err := reg.Register("test", tool, fixed); err != nil {
				t.Fatal(err)
			}
		}
	} else if err := builtin.Register(reg, builtin.Options{Spaces: cfg.Spaces, Policy: policy}); err != nil {
		t.Fatal(err)
	}
	if err := reg.Register("net", webFetch(), fixed); err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Policy = policy
	mc.Registry = reg
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := engine.New(ctx, cfg, reg, m, policy, engine.Options{Channel: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	// The server runs with a 2048-token context (scripts/e2e.sh); a short
	// output budget keeps a random model's runaway strings cheap.
	e.Selector().Config.NumCtx = 4096
	e.Selector().Config.NumPredict = 128
	return &env{dir: dir, cfg: cfg, reg: reg, engine: e}
}

// schemas compiles every registered tool's full parameters schema with an
// independent validator (santhosh-tekuri/jsonschema, 2020-12).
func (v *env) schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	out := map[string]*jsonschema.Schema{}
	for _, r := range v.reg.List() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.Tool.Parameters))
		if err != nil {
			t.Fatalf("%s: %v", r.Tool.Name, err)
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		url := "mem://" + r.Tool.Name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: %v", r.Tool.Name, err)
		}
		out[r.Tool.Name] = s
	}
	return out
}

// callable is the set of tool names the caller may call.
func (v *env) callable(caller string) map[string]bool {
	out := map[string]bool{}
	for _, e := range v.engine.CallableTools(caller) {
		out[e.Tool.Name] = true
	}
	return out
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// requests are varied on purpose: files, spaces, arithmetic, the web (which
// alice may not use), the secret space (which alice may not read), and
// requests no tool fits.
var requests = []string{
	"List the PDF files in my docs folder",
	"What is 17 * (3 + 4)?",
	"Read notes.txt from docs",
	"Extract the text of papers/attention.pdf",
	"Summarize this: The transformer architecture replaced recurrence with attention.",
	"Compare the pricing in pricing-2024.pdf and pricing-2025.pdf",
	"Fetch https://example.com/pricing and tell me what it says",
	"Show me the passwords file in the secret space",
	"List everything in the secret folder recursively",
	"How much is 2^10 - 24?",
	"Download the latest news from the web",
	"What's the weather in Paris tomorrow?",
	"Tell me a joke",
	"Find all reports named *.txt in docs, at most 5",
	"Read the first 100 bytes of docs/notes.txt",
	"Extract pages 1 to 2 of pricing-2025.pdf",
	"Compare these two texts: 'hello world' and 'hello there world'",
	"Summarize the research papers in my documents folder in 50 words",
	"Translate 'good morning' into French",
	"Compute the square root of 144 plus 3",
}

// TestSelectValidAndPermitted: every call the selector returns through the
// engine, with the tiny model under the grammar, is valid against its tool's
// full schema, names a tool (and a space) the caller may use, and the raw
// output ends where the grammar ends. A call that stays invalid after the
// repair must be the clear InvalidCallError, its output still a prefix the
// grammar allows.
func TestSelectValidAndPermitted(t *testing.T) {
	host, model := e2eServer(t)
	v := newEngine(t, host, model, false, false)
	allowed := v.callable(alice)
	if allowed["web-fetch"] {
		t.Fatal("alice may call web-fetch: the test's policy is wrong")
	}
	if !allowed["list-files"] || !allowed["calculator"] {
		t.Fatalf("alice's tools %v: want the builtin tools", allowed)
	}
	reqs := spread(requests)
	st := v.selectAll(t, alice, model, reqs)
	t.Logf("tiny model, builtin tools, %d requests: %s", len(reqs), st)
}

// TestSelectBoundedTools: the same checks over tools whose arguments are all
// bounded, where the model must finish calls — so at least one call comes
// back and is checked in full.
func TestSelectBoundedTools(t *testing.T) {
	host, model := e2eServer(t)
	v := newEngine(t, host, model, false, true)
	allowed := v.callable(alice)
	if allowed["web-fetch"] || !allowed["set-timer"] {
		t.Fatalf("alice's tools %v: want the bounded tools without web-fetch", allowed)
	}
	reqs := []string{
		"Set a tea timer for 4 minutes",
		"Convert 5 miles to kilometers",
		"What's the weather in Paris for the next 3 days?",
		"Fetch https://example.com and show it",
		"Tell me a joke",
		"Remind me of the meeting in 30 minutes",
	}
	st := v.selectAll(t, alice, model, reqs)
	t.Logf("tiny model, bounded tools, %d requests: %s", len(reqs), st)
	if st.first+st.repaired == 0 {
		t.Errorf("no call came back over bounded tools: the grammar-constrained path never produced a valid call")
	}
}

type selectStats struct{ first, repaired, invalid, none int }

func (s selectStats) String() string {
	return fmt.Sprintf("valid at the first attempt %d, after the repair %d, InvalidCallError %d (\"none\" chosen %d)",
		s.first, s.repaired, s.invalid, s.none)
}

func (v *env) selectAll(t *testing.T, caller, model string, reqs []string) selectStats {
	t.Helper()
	e := v.engine
	if e.AnswerModel() == nil {
		t.Fatalf("engine is in no-LLM mode: %s", e.ModelNotice())
	}
	schemas := v.schemas(t)
	allowed := v.callable(caller)
	var st selectStats
	for i, req := range reqs {
		ctx := ctxFor(t, 5*time.Minute)
		start := time.Now()
		sel, err := e.Select(ctx, caller, req)
		took := time.Since(start).Round(time.Millisecond)
		if sel != nil {
			for _, c := range sel.Candidates {
				if !allowed[c.Name] {
					t.Errorf("%q: candidate %s is not callable by %s", req, c.Name, caller)
				}
			}
		}
		var ice *selector.InvalidCallError
		if errors.As(err, &ice) {
			// A clear error, not a returned call: allowed with random weights.
			st.invalid++
			t.Logf("%2d %-55q invalid after repair (%v): %v\n    raw: %.160q", i, req, took, err, ice.Raw)
			if sel == nil || sel.Mode != selector.ModeModel {
				t.Errorf("%q: InvalidCallError without the model's selection", req)
				continue
			}
			v.checkPrefix(t, caller, req, sel.Candidates, ice.Raw)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", req, err)
			continue
		}
		if sel.Mode != selector.ModeModel || sel.Model != model {
			t.Errorf("%q: mode %s model %q (notice %q), want %s %s", req, sel.Mode, sel.Model, sel.Notice, selector.ModeModel, model)
		}
		if sel.Repaired {
			st.repaired++
		} else {
			st.first++
		}
		t.Logf("%2d %-55q %s %s repaired=%v (%v)", i, req, sel.Function, sel.Arguments, sel.Repaired, took)
		checkStopped(t, req, sel.Raw)
		if sel.Validation != "ok" {
			t.Errorf("%q: validation %q on a returned call", req, sel.Validation)
		}
		if sel.Function == grammar.NoneTool {
			st.none++
			if string(sel.Arguments) != "{}" {
				t.Errorf("%q: none with arguments %s", req, sel.Arguments)
			}
			continue
		}
		if !allowed[sel.Function] {
			t.Errorf("%q: %s is not a tool %s may call", req, sel.Function, caller)
			continue
		}
		var args any
		if err := json.Unmarshal(sel.Arguments, &args); err != nil {
			t.Errorf("%q: arguments %s: %v", req, sel.Arguments, err)
			continue
		}
		if err := schemas[sel.Function].Validate(args); err != nil {
			t.Errorf("%q: %s%s is invalid against its schema: %v", req, sel.Function, sel.Arguments, err)
		}
		if m, ok := args.(map[string]any); ok {
			if sp, ok := m["space"].(string); ok && sp != "docs" {
				t.Errorf("%q: %s reads space %q, which %s may not read", req, sel.Function, sp, caller)
			}
		}
	}
	return st
}

// checkPrefix asserts that an output the selector rejected stayed in the
// request's grammar (over the candidates as the caller sees them) up to its
// last chunk: generation stops at the chunk holding the first byte that
// leaves the grammar, never later.
func (v *env) checkPrefix(t *testing.T, caller, req string, cands []selector.Candidate, raw string) {
	t.Helper()
	byName := map[string]pipeline.Tool{}
	for _, e := range v.engine.CallableTools(caller) {
		byName[e.Tool.Name] = e.Tool
	}
	var tools []grammar.ToolSchema
	for _, c := range cands {
		tools = append(tools, grammar.ToolSchema{Name: c.Name, Parameters: byName[c.Name].Parameters})
	}
	g, err := grammar.ToolCall(tools, selector.ToolCallGrammar)
	if err != nil {
		t.Fatal(err)
	}
	sc := selector.NewOutputChecker(g)
	for i := 0; i < len(raw); i++ {
		if _, err := sc.Write([]byte{raw[i]}); err != nil {
			// One token's worth of bytes may follow the offending byte.
			if rest := len(raw) - i; rest > 64 {
				t.Errorf("%q: generation went on for %d bytes after leaving the grammar at byte %d: %v\n%.300q", req, rest, i, err, raw)
			}
			t.Logf("    left the grammar at byte %d of %d: %v", i, len(raw), err)
			return
		}
	}
}

// checkStopped asserts that the raw output is one JSON object and nothing
// after it but the white space the grammar allows.
func checkStopped(t *testing.T, req, raw string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Errorf("%q: raw output is not a JSON object: %v\n%.300q", req, err, raw)
		return
	}
	rest, _ := io.ReadAll(dec.Buffered())
	if tail := strings.TrimSpace(string(rest)); tail != "" {
		t.Errorf("%q: output continues after the grammar's end: %.100q", req, tail)
	}
	if len(rest) > 32 {
		t.Errorf("%q: %d bytes after the call (the grammar allows 32 of white space)", req, len(rest))
	}
}

// TestNoOllama: a closed port means no-LLM mode, with its notice, and Select
// still answers.
func TestNoOllama(t *testing.T) {
	_, model := e2eServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	v := newEngine(t, closed, model, false, false)
	e := v.engine
	if e.AnswerModel() != nil {
		t.Fatalf("engine has a model against the closed port %s", closed)
	}
	if !strings.Contains(e.ModelNotice(), "not reachable") || !strings.Contains(e.ModelNotice(), selector.NoLLMNotice) {
		t.Errorf("notice %q: want it to say Ollama is not reachable, and the no-LLM notice", e.ModelNotice())
	}
	if e.Mode() != "no-LLM mode" {
		t.Errorf("Mode() = %q", e.Mode())
	}
	for _, req := range []string{"What is 6 * 7?", "List the PDF files in docs", "Tell me a joke"} {
		sel, err := e.Select(ctxFor(t, time.Minute), alice, req)
		if err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		// The notice is no-LLM mode's, with the reason for a "none" after it.
		if sel.Mode != selector.ModeNoLLM || !strings.HasPrefix(sel.Notice, selector.NoLLMNotice) {
			t.Errorf("%q: mode %s notice %q", req, sel.Mode, sel.Notice)
		}
		t.Logf("%q → %s %s", req, sel.Function, sel.Arguments)
		if req == "Tell me a joke" && (sel.Function != "none" || !strings.Contains(sel.Notice, "no tool fits")) {
			t.Errorf("%q → %s (notice %q), want none: no tool fits", req, sel.Function, sel.Notice)
		}
	}
	sel, _ := e.Select(ctxFor(t, time.Minute), alice, "What is 6 * 7?")
	if sel.Function != "calculator" {
		t.Errorf("no-LLM mode chose %s for arithmetic, want calculator", sel.Function)
	}
}

// TestUnknownModel: the server answers but has no such model — a
// configuration error that must say so, not a panic and not a silent
// fallback to no-LLM mode.
func TestUnknownModel(t *testing.T) {
	host, _ := e2eServer(t)
	const missing = "airs-no-such-model-e2e"
	v := newEngine(t, host, missing, false, false)
	e := v.engine
	sel, err := e.Select(ctxFor(t, 2*time.Minute), alice, "What is 6 * 7?")
	if err == nil {
		t.Fatalf("Select with an unknown model succeeded: %+v", sel)
	}
	if sel != nil && sel.Mode == selector.ModeNoLLM {
		t.Fatalf("fell back to no-LLM mode silently: %+v", sel)
	}
	if !errors.Is(err, ollama.ErrModelNotFound) {
		t.Errorf("error %v: want it to match ollama.ErrModelNotFound", err)
	}
	for _, want := range []string{missing, "ollama.model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	t.Logf("unknown model: %v", err)
	_, perr := e.Plan(ctxFor(t, 2*time.Minute), alice, "Compare the pricing in these two documents")
	if !errors.Is(perr, ollama.ErrModelNotFound) {
		t.Errorf("Plan with an unknown model: %v, want ErrModelNotFound", perr)
	}
}

// cuttingProxy forwards to the real server; a chat response is cut (the
// connection closed) after its first lines, mid-stream.
type cuttingProxy struct {
	upstream string
	lines    int
	cuts     atomic.Int32
}

func (p *cuttingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.upstream+r.URL.Path, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	if r.URL.Path != "/api/chat" || resp.StatusCode != http.StatusOK {
		io.Copy(w, resp.Body)
		return
	}
	br := bufio.NewReader(resp.Body)
	for i := 0; i < p.lines; i++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			// Half of the last line: the cut lands inside a message.
			if i == p.lines-1 {
				line = line[:len(line)/2]
			}
			w.Write(line)
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
	p.cuts.Add(1)
	conn, _, err := w.(http.Hijacker).Hijack()
	if err == nil {
		conn.Close() // the chunked body never ends: the client sees the cut
	}
}

func startProxy(t *testing.T, upstream string, lines int) (*cuttingProxy, string) {
	t.Helper()
	u, err := ollama.ParseHost(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{upstream: u.String(), lines: lines}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p, "http://" + ln.Addr().String()
}

// TestTruncatedStream: a stream cut mid-way is a clear error from Select,
// and with recording on the session log holds only whole records — none
// with a call or model output taken from the cut stream.
func TestTruncatedStream(t *testing.T) {
	host, model := e2eServer(t)
	proxy, addr := startProxy(t, host, 3)
	v := newEngine(t, addr, model, true, false)
	e := v.engine
	if e.AnswerModel() == nil {
		t.Fatalf("no model through the proxy: %s", e.ModelNotice())
	}
	if e.SessionLog() == nil {
		t.Fatal("recording is off")
	}
	const req = "What is 6 * 7?"
	sel, err := e.Select(ctxFor(t, 5*time.Minute), alice, req)
	if err == nil {
		t.Fatalf("Select over a cut stream succeeded: %+v", sel)
	}
	if proxy.cuts.Load() == 0 {
		t.Fatalf("the proxy never cut a stream; error: %v", err)
	}
	if !errors.Is(err, ollama.ErrTruncated) {
		t.Errorf("error %v: want it to match ollama.ErrTruncated", err)
	}
	if !strings.Contains(err.Error(), "truncated") || !strings.Contains(err.Error(), model) {
		t.Errorf("error %q: want it to say the model's stream was truncated", err)
	}
	t.Logf("truncated stream: %v", err)

	// Through a Turn, which records.
	tr, err := e.Turn(ctxFor(t, 5*time.Minute), alice, req, nopUI{}, engine.TurnOptions{Session: "e2e-cut"})
	if !errors.Is(err, ollama.ErrTruncated) {
		t.Errorf("Turn: error %v, want ErrTruncated", err)
	}
	if tr.Ran() {
		t.Errorf("Turn ran a call from a cut stream: %+v", tr.First().Result)
	}
	if tr.RecordErr != nil {
		t.Errorf("recording the failed turn: %v", tr.RecordErr)
	}
	path := e.RecordingPath()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("session log ends mid-line: %.200q", data[max(0, len(data)-200):])
	}
	rd := session.NewReader(bytes.NewReader(data))
	var recs []session.Record
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("session log: %v\n%s", err, data)
		}
		recs = append(recs, r)
	}
	if rd.Torn() {
		t.Errorf("session log has a torn tail")
	}
	found := false
	for _, r := range recs {
		if r.Kind != session.KindRequest || r.Request != req {
			continue
		}
		found = true
		if r.Call != nil || r.RawOutput != "" || len(r.Steps) > 0 {
			t.Errorf("record of the cut request holds a call or model output: call %+v raw %q", r.Call, r.RawOutput)
		}
		if r.Execution == nil || r.Execution.Outcome == session.OutcomeOK || !strings.Contains(r.Execution.Error, "truncated") {
			t.Errorf("record of the cut request does not say it failed: %+v", r.Execution)
		}
	}
	if !found {
		t.Errorf("no record of the failed request in %s:\n%s", path, data)
	}
}

type nopUI struct{}

func (nopUI) Selected(*selector.Selection, *pipeline.Tool)                 {}
func (nopUI) Confirm(context.Context, pipeline.Tool, json.RawMessage) bool { return false }
func (nopUI) Running(string)                                               {}
func (nopUI) Result(*pipeline.Result, error)                               {}
func (nopUI) Note(string)                                                  {}
func (nopUI) Token(string) error                                           { return nil }

// TestPlanTinyModel: the seed's two multi-step requests, and one over the
// bounded tools, planned by the tiny model under the plan grammars. Every
// plan must come back valid — it parses (chains.ParsePlan) and validates
// against the caller's catalog (Chain.Validate: references name earlier
// steps, fields their tools return, of the parameter's type) — because the
// grammars let no other plan be written and bound every output's length;
// a random model gets no leniency.
//
// The model is the e2e model's untied variant (untiedVariant): the default
// tiny model repeats its last token, so any literal the grammar lets run
// over 30 tokens ends at Ollama's runaway check, cut, whatever the grammar.
func TestPlanTinyModel(t *testing.T) {
	host, base := e2eServer(t)
	model := untiedVariant(t, base)
	builtinReqs := []string{
		"Compare the pricing in these two documents",
		"Summarize the research papers in my documents folder",
	}
	boundedReqs := []string{"Set a tea timer for 4 minutes, then convert 5 miles to kilometers"}
	t.Run("builtin", func(t *testing.T) { planAll(t, newEngine(t, host, model, false, false), builtinReqs, nil) })
	t.Run("bounded", func(t *testing.T) { planAll(t, newEngine(t, host, model, false, true), boundedReqs, nil) })
	// The seed's own outlines, whatever the random model would choose: the
	// second pass alone, where the comparison and the summary can only
	// take their texts by reference to the extractions before them.
	t.Run("seed outlines", func(t *testing.T) {
		outlines := map[string][]string{
			builtinReqs[0]: {"pdf-extract", "pdf-extract", "compare"},
			builtinReqs[1]: {"list-files", "pdf-extract", "summarize"},
		}
		planAll(t, newEngine(t, host, model, false, false), builtinReqs, outlines)
	})
}

// untiedVariant creates on the e2e server the variant of model base with an
// untied output projection (internal/tinymodel: same tokenizer, same sizes,
// an output.weight of its own), and returns its name.
func untiedVariant(t *testing.T, base string) string {
	t.Helper()
	client, err := api.ClientFromEnvironment()
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, 5*time.Minute)
	tok, err := tinymodel.TokenizerOf(ctx, client, base)
	if err != nil {
		t.Fatal(err)
	}
	c := tinymodel.DefaultConfig()
	c.Name, c.TieEmbeddings = base+"-untied", false
	start := time.Now()
	if err := tinymodel.Create(ctx, client, t.TempDir(), c, tok); err != nil {
		t.Fatal(err)
	}
	t.Logf("created %s (%d tokens, untied output) in %v", c.Name, len(tok.Tokens), time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() { client.Delete(context.Background(), &api.DeleteRequest{Model: c.Name}) })
	return c.Name
}

// planAll plans each request (with the given outline, when there is one:
// Selector.PlanWith) and checks the plan in full.
func planAll(t *testing.T, v *env, reqs []string, outlines map[string][]string) {
	e := v.engine
	if e.AnswerModel() == nil {
		t.Fatalf("no model: %s", e.ModelNotice())
	}
	allowed := v.callable(alice)
	schemas := v.schemas(t)
	for _, req := range reqs {
		start := time.Now()
		var pr *selector.PlanResult
		var err error
		if o, ok := outlines[req]; ok {
			pr, err = e.Selector().PlanWith(ctxFor(t, 20*time.Minute), alice, req, o, e.Catalog())
		} else {
			pr, err = e.Plan(ctxFor(t, 20*time.Minute), alice, req)
		}
		took := time.Since(start).Round(time.Millisecond)
		if pr != nil {
			t.Logf("%q (%v): outline %q\n    outline raw: %q\n    plan raw (budget %d, repaired %v): %q", req, took, pr.Outline, pr.OutlineRaw, pr.Budget, pr.Repaired, pr.Raw)
		}
		if err != nil {
			t.Errorf("%q: no valid plan: %v", req, err)
			continue
		}
		if pr.Mode != selector.ModeModel {
			t.Errorf("%q: mode %s", req, pr.Mode)
		}
		wire, _ := json.Marshal(pr.Plan)
		c, err := chains.ParsePlan(wire)
		if err != nil {
			t.Errorf("%q: plan does not parse: %v\n%s", req, err, wire)
			continue
		}
		if err := c.Validate(e.Catalog(), alice); err != nil {
			t.Errorf("%q: plan does not validate: %v\n%s", req, err, wire)
		}
		plan := pr.Plan
		if len(plan.Steps) != len(pr.Outline) {
			t.Errorf("%q: %d steps for an outline of %d", req, len(plan.Steps), len(pr.Outline))
		}
		for i, s := range plan.Steps {
			if !allowed[s.Function] {
				t.Errorf("%q: plan step calls %s, which %s may not call", req, s.Function, alice)
			}
			if want := selector.StepID(i + 1); s.ID != want || i < len(pr.Outline) && s.Function != pr.Outline[i] {
				t.Errorf("%q: step %d is %s %s, want %s %s", req, i+1, s.ID, s.Function, want, pr.Outline[i])
			}
			// Arguments without references are whole calls: valid against
			// the tool's full schema.
			lit := s.Arguments
			if !strings.Contains(string(lit), "{{") {
				var args any
				json.Unmarshal(lit, &args)
				if err := schemas[s.Function].Validate(args); err != nil {
					t.Errorf("%q: step %s: %s%s is invalid against its schema: %v", req, s.ID, s.Function, lit, err)
				}
			}
		}
		checkStopped(t, req, pr.Raw)
		t.Logf("%q: valid plan of %d steps: %s", req, len(plan.Steps), wire)
	}
}

// spread keeps every k-th request, AIRS_E2E_EVERY (default 3), so CI's e2e
// stays within its time budget: grammar-constrained sampling costs tens of
// ms per token over the 151k-token vocabulary. AIRS_E2E_EVERY=1 runs all.
func spread(all []string) []string {
	k := 3
	if n, err := strconv.Atoi(os.Getenv("AIRS_E2E_EVERY")); err == nil && n > 0 {
		k = n
	}
	var out []string
	for i := 0; i < len(all); i += k {
		out = append(out, all[i])
	}
	return out
}

// stepsUI counts the steps a turn announces and declines every
// confirmation (a random model's call of a destructive tool
// must never run unconfirmed).
type stepsUI struct {
	nopUI
	steps []int
	max   int
}

func (u *stepsUI) Step(n, max int) { u.steps = append(u.steps, n); u.max = max }

// TestMultiStepTinyModel: turns that may take several steps, with the tiny
// model choosing each next call from the results under the grammar. Random
// weights make the choices meaningless, so the test asserts what must hold
// whatever the model emits: every turn ends within max_steps; every step's
// call is valid against its tool's full schema (checked by an independent
// validator) and names a tool the caller may call, or was refused as
// invalid and not run; only the last step may be one that did not run; a
// turn that used every step says so; the session log holds every step. At
// least one turn must take more than one step, or the loop was not tested.
func TestMultiStepTinyModel(t *testing.T) {
	host, base := e2eServer(t)
	model := untiedVariant(t, base)
	v := newEngine(t, host, model, true, false)
	const maxSteps = 3
	schemas := v.schemas(t)
	allowed := v.callable(alice)
	reqs := []string{
		"Find the PDFs in docs, then summarize the newest",
		"Extract the text of pricing-2024.pdf and then compare it with pricing-2025.pdf",
		"List the files in docs, then read notes.txt",
		"What is 17 * 3? Then add 12 to the result",
		"Read notes.txt from docs and summarize it in 10 words",
	}
	multi, calls := 0, 0
	for _, req := range reqs {
		ui := &stepsUI{}
		start := time.Now()
		tr, err := v.engine.Turn(ctxFor(t, 10*time.Minute), alice, req, ui, engine.TurnOptions{Session: "e2e-steps", MaxSteps: maxSteps})
		var invalid *selector.InvalidCallError
		if err != nil && !errors.As(err, &invalid) && !strings.Contains(err.Error(), "the model's answer") {
			t.Errorf("%q: %v", req, err)
		}
		if tr == nil {
			t.Fatalf("%q: no turn result", req)
		}
		var shown []string
		for n, st := range tr.Steps {
			sel := st.Selection
			shown = append(shown, sel.Function)
			if n < len(tr.Steps)-1 && st.Result == nil {
				t.Errorf("%q step %d did not run, yet the turn went on", req, n+1)
			}
			if sel.Function == grammar.NoneTool {
				if n != len(tr.Steps)-1 || st.Result != nil {
					t.Errorf("%q step %d: none, but not the turn's end", req, n+1)
				}
				continue
			}
			if st.Result == nil {
				if st.Skipped == "" {
					t.Errorf("%q step %d: neither run nor skipped", req, n+1)
				}
				continue // refused as invalid (after the repair) or declined
			}
			calls++
			if sel.Validation != "ok" || !allowed[sel.Function] {
				t.Errorf("%q step %d ran %s (validation %q, allowed %v)", req, n+1, sel.Function, sel.Validation, allowed[sel.Function])
				continue
			}
			var args any
			if err := json.Unmarshal(sel.Arguments, &args); err != nil {
				t.Errorf("%q step %d: arguments %s: %v", req, n+1, sel.Arguments, err)
			} else if err := schemas[sel.Function].Validate(args); err != nil {
				t.Errorf("%q step %d: %s %s is invalid: %v", req, n+1, sel.Function, sel.Arguments, err)
			}
		}
		if len(tr.Steps) > maxSteps || tr.Calls() > maxSteps {
			t.Errorf("%q: %d steps, %d calls, over max_steps %d", req, len(tr.Steps), tr.Calls(), maxSteps)
		}
		if len(ui.steps) != max(len(tr.Steps)-1, 0) || len(ui.steps) > 0 && ui.max != maxSteps {
			t.Errorf("%q: the UI was told of steps %v (of %d) for %d steps", req, ui.steps, ui.max, len(tr.Steps))
		}
		if tr.Calls() == maxSteps && !strings.Contains(tr.Stopped, "max_steps") {
			t.Errorf("%q: every step used but no note: %q", req, tr.Stopped)
		}
		if len(tr.Steps) > 1 {
			multi++
		}
		t.Logf("%q: steps %v, %d calls, stopped %q, %.1fs", req, shown, tr.Calls(), tr.Stopped, time.Since(start).Seconds())
	}
	if err := v.engine.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := session.ReadFile(filepath.Join(v.cfg.Home, "sessions", "sessions.jsonl"))
	if err != nil || len(recs) != len(reqs) {
		t.Fatalf("session log: %v, %d records for %d turns", err, len(recs), len(reqs))
	}
	for _, r := range recs {
		for _, st := range r.TurnSteps {
			if st.Call != nil && st.Execution != nil && st.Execution.Outcome != session.OutcomeSkipped && !st.Validation.Valid {
				t.Errorf("%q: recorded step %d ran an invalid call: %+v", r.Request, st.Step, st)
			}
		}
	}
	if multi == 0 {
		t.Errorf("no turn took more than one step (%d calls in all): the multi-step loop was not exercised", calls)
	}
}
