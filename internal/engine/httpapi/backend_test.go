package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/engine/enginetest"
	"github.com/airs-dev/airs/internal/engine/mcpapi"
	mcpserver "github.com/airs-dev/airs/mcp/server"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/session"
)

// newServed starts the real engine (no-LLM mode, builtin tools over a space
// of real PDFs, recording on) behind the real HTTP server.
func newServed(t *testing.T) (base string, cfg *config.Config) {
	t.Helper()
	base, cfg, _ = newServedEngine(t, false)
	return base, cfg
}

// newServedEngine is newServed that also returns the engine, with the space
// watcher started when watch is set.
func newServedEngine(t *testing.T, watch bool) (base string, cfg *config.Config, eng *engine.Engine) {
	t.Helper()
	return newServedEngineWith(t, servedOptions{watch: watch})
}

// servedOptions adjust newServedEngineWith's engine.
type servedOptions struct {
	watch       bool                                             // start the spaces' watcher
	ttl         time.Duration                                    // recommendations' life (0: the default)
	register    func(reg *pipeline.Registry, cfg *config.Config) // more tools, after the builtins
	timeout     time.Duration                                    // the server's RequestTimeout (0: its default)
	guard       bool                                             // a guard, with web as its reviewer
	selfApprove bool                                             // guard.self_approve: web may approve its own held calls
	mcp         bool                                             // serve /mcp (mcp/server over MCPBackend)
	model       selector.Model                                   // selects and answers (nil: no-LLM mode)
}

func newServedEngineWith(t testing.TB, o servedOptions) (base string, cfg *config.Config, eng *engine.Engine) {
	t.Helper()
	e, cfg := enginetest.New(t, enginetest.Options{TTL: o.ttl, Register: o.register, Guard: o.guard, SelfApprove: o.selfApprove, Model: o.model})
	if o.watch {
		if err := e.WatchSpaces(); err != nil {
			t.Fatal(err)
		}
	}
	sc := server.Config{Tokens: []server.Token{{SHA256: server.HashToken("t-web"), Agent: "web"}, {SHA256: server.HashToken("t-nobody"), Agent: "nobody"}}, RequestTimeout: o.timeout}
	if o.mcp {
		mh := mcpserver.NewHTTPHandler(mcpapi.New(e), func(r *http.Request) string { return server.Caller(r.Context()) }, mcpserver.Options{})
		t.Cleanup(mh.Close)
		sc.MCP = mh
	}
	s := server.New(New(e), sc)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return "http://" + l.Addr().String(), cfg, e
}

func post(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestServedChatRunsAndRecords(t *testing.T) {
	base, cfg := newServed(t)
	resp := post(t, base+"/v1/chat", "t-web", `{"text":"what is (12.5 + 7) * 3"}`)
	defer resp.Body.Close()
	var events []string
	var result string
	sc := bufio.NewScanner(resp.Body)
	ev := ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			ev = e
			events = append(events, e)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && ev == "result" {
			result = d
		}
	}
	if got := strings.Join(events, ","); got != "selection,running,result,done" {
		t.Fatalf("events %s", got)
	}
	if !strings.Contains(result, `"result":58.5`) {
		t.Errorf("result %s", result)
	}
	recs, err := session.ReadFile(filepath.Join(cfg.Home, "sessions", "sessions.jsonl"))
	if err != nil || len(recs) != 1 {
		t.Fatalf("session log: %v, %d records", err, len(recs))
	}
	r := recs[0]
	if r.Channel != "serve" || r.Caller != "web" || r.Call == nil || r.Call.Tool != "calculator" || r.Execution == nil || r.Execution.Outcome != session.OutcomeOK || len(r.Candidates) == 0 {
		t.Errorf("record %+v", r)
	}
}

// The seed's two examples through POST /v1/pipelines/run, without a model:
// the DSL versions run on real PDFs and produce the right content.
func TestServedSeedPipelines(t *testing.T) {
	base, _ := newServed(t)
	run := func(file string, input map[string]any, token string) (int, map[string]any) {
		y, err := os.ReadFile(filepath.Join("..", "..", "..", "chains", "examples", file))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]any{"yaml": string(y), "input": input})
		resp := post(t, base+"/v1/pipelines/run", token, string(body))
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	code, out := run("compare-pricing.yaml", map[string]any{"a": "quotes/acme-2024.pdf", "b": "quotes/acme-2025.pdf"}, "t-web")
	if code != 200 {
		t.Fatalf("compare: %d %v", code, out)
	}
	var res struct {
		Output struct {
			Summary string `json:"summary"`
		} `json:"output"`
	}
	b, _ := json.Marshal(out)
	_ = json.Unmarshal(b, &res)
	for _, want := range []string{"$10 → $12", "$25 → $30", "$0.02 → $0.03"} {
		if !strings.Contains(res.Output.Summary, want) {
			t.Errorf("compare summary lacks %q: %s", want, res.Output.Summary)
		}
	}
	code, out = run("summarize-papers.yaml", map[string]any{"dir": "papers"}, "t-web")
	if code != 200 {
		t.Fatalf("summarize: %d %v", code, out)
	}
	b, _ = json.Marshal(out)
	for _, want := range []string{"papers/attention.pdf", "papers/bm25.pdf", "papers/grammars.pdf", "Transformer", "BM25", "extractive"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("summarize result lacks %q", want)
		}
	}
	// An agent that may read no space is refused before anything runs.
	code, out = run("summarize-papers.yaml", map[string]any{"dir": "papers"}, "t-nobody")
	if code != http.StatusForbidden {
		t.Errorf("nobody: %d %v", code, out)
	}
}
