package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server"
)

// postJSON posts body as token and answers the status and the raw body.
func postJSON(t *testing.T, url, token, body string) (int, string) {
	t.Helper()
	resp := post(t, url, token, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Error texts over HTTP name a space by its name, never by the host's
// directory.
func TestHTTPErrorsHideHostPaths(t *testing.T) {
	base, cfg := newServed(t)
	dir := cfg.Spaces["documents"]
	code, body := postJSON(t, base+"/v1/select", "t-web", `{"text":"summarize the file missing-report.pdf"}`)
	if code < 400 || !strings.Contains(body, "missing-report.pdf") {
		t.Fatalf("select of a missing file: %d %s", code, body)
	}
	var v struct{ Message string }
	_ = json.Unmarshal([]byte(body), &v)
	if strings.Contains(body, dir) || strings.Contains(body, cfg.Home) || !strings.Contains(v.Message, "<documents>") {
		t.Errorf("the error shows the host's paths (%s):\n%s", dir, body)
	}
	code, body = postJSON(t, base+"/v1/call", "t-web", `{"tool":"read-file","arguments":{"space":"documents","path":"nope/missing.txt"}}`)
	if code < 400 || strings.Contains(body, dir) {
		t.Errorf("read-file of a missing file: %d %s", code, body)
	}
}

// A plan request of more parts than a plan may have is refused before any
// work, 413 naming the limit's key.
func TestPlanPartsLimit(t *testing.T) {
	base, _ := newServed(t)
	text := strings.Repeat("add 1 and 2. ", 17)
	code, body := postJSON(t, base+"/v1/plan", "t-web", `{"text":"`+text+`"}`)
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "http.limits.plan_parts") || !strings.Contains(body, "has 17 parts") {
		t.Errorf("17 parts: %d %s", code, body)
	}
}

// /metrics shows an agent the series of the tools it may call, and no
// other agent's.
func TestMetricsShowTheCallersTools(t *testing.T) {
	base, _ := newServed(t)
	if code, body := postJSON(t, base+"/v1/call", "t-web", `{"tool":"list-files","arguments":{"space":"documents"}}`); code != 200 {
		t.Fatalf("list-files: %d %s", code, body)
	}
	metrics := func(token string) string {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if m := metrics("t-web"); !strings.Contains(m, `tool="list-files"`) {
		t.Errorf("web's metrics lack its own list-files:\n%.2000s", m)
	}
	m := metrics("t-nobody")
	if strings.Contains(m, `tool="list-files"`) || !strings.Contains(m, `tool="calculator"`) || !strings.Contains(m, "airs_calls_total") {
		t.Errorf("nobody's metrics show web's tools, or lack its own:\n%.3000s", m)
	}
}

func TestLabelValue(t *testing.T) {
	for line, want := range map[string]string{
		`a{provider="p",tool="x",version="1"} 3`:         "x",
		`a_bucket{provider="p\"q",tool="y",le="+Inf"} 1`: "y",
		`a{tool="z\\w"} 1`:                               `z\w`,
		`a 1`:                                            "",
		`a{le="1"} 2`:                                    "",
	} {
		got, _ := labelValue([]byte(line), "tool")
		if got != want {
			t.Errorf("%s: %q, want %q", line, got, want)
		}
	}
}

// A reviewer cannot approve its own held call (guard.self_approve: false,
// the default), may deny it, and may approve another agent's; with
// self_approve it may approve its own.
func TestSelfApproval(t *testing.T) {
	base, cfg, _ := newServedEngineWith(t, servedOptions{guard: true, register: func(reg *pipeline.Registry, cfg *config.Config) {
		err := reg.Register("test", pipeline.Tool{Name: "erase", Version: "1.0.0", Description: "Erase a thing.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`),
			Trust:      pipeline.TL2, LatencyClass: pipeline.Instant, Destructive: true},
			pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
				return json.RawMessage(`{"erased":true}`), nil
			}))
		if err != nil {
			t.Fatal(err)
		}
	}})
	hold := func(token, args string) string {
		t.Helper()
		code, body := postJSON(t, base+"/v1/call", token, `{"tool":"erase","arguments":`+args+`}`)
		var v struct {
			Confirmation struct {
				ID string `json:"id"`
			} `json:"confirmation"`
		}
		_ = json.Unmarshal([]byte(body), &v)
		if code != http.StatusPreconditionRequired || v.Confirmation.ID == "" {
			t.Fatalf("%s's erase: %d %s", token, code, body)
		}
		return v.Confirmation.ID
	}
	own := hold("t-web", `{"n":1}`)
	if code, body := postJSON(t, base+"/v1/reviews/"+own+"/approve", "t-web", ""); code != http.StatusForbidden || !strings.Contains(body, "self_approval") || !strings.Contains(body, "guard.self_approve") {
		t.Fatalf("web approves its own call: %d %s", code, body)
	}
	other := hold("t-nobody", `{"n":2}`)
	if code, body := postJSON(t, base+"/v1/reviews/"+other+"/approve", "t-web", ""); code != 200 {
		t.Fatalf("web approves nobody's call: %d %s", code, body)
	}
	if code, body := postJSON(t, base+"/v1/reviews/"+own+"/deny", "t-web", ""); code != 200 {
		t.Fatalf("web denies its own call: %d %s", code, body)
	}
	cfg.Guard.SelfApprove = true
	again := hold("t-web", `{"n":3}`)
	if code, body := postJSON(t, base+"/v1/reviews/"+again+"/approve", "t-web", ""); code != 200 {
		t.Fatalf("with self_approve, web approves its own call: %d %s", code, body)
	}
}

// pausingRetriever is the engine's retriever with a hook: its first
// retrieval says so and waits until the request's context ends (the client
// left), then answers as if nothing happened; it counts the retrievals
// that follow.
type pausingRetriever struct {
	selector.Retriever
	started chan struct{}
	n       atomic.Int32
}

func (p *pausingRetriever) Retrieve(ctx context.Context, q string, k int, allowed []string) ([]selector.Retrieved, error) {
	if p.n.Add(1) == 1 {
		close(p.started)
		<-ctx.Done()
		return p.Retriever.Retrieve(context.Background(), q, k, allowed)
	}
	return p.Retriever.Retrieve(ctx, q, k, allowed)
}

// endedBackend says when Plan returned, and with what.
type endedBackend struct {
	server.Backend
	ended chan error
}

func (b endedBackend) Plan(ctx context.Context, caller, text string) (any, error) {
	out, err := b.Backend.Plan(ctx, caller, text)
	b.ended <- err
	return out, err
}

// A /v1/plan whose client left ends its work: the real engine, behind the
// real server, stops planning at the next part instead of going through
// the request's other parts.
func TestServedPlanEndsWhenTheClientLeaves(t *testing.T) {
	_, _, e := newServedEngineWith(t, servedOptions{})
	pr := &pausingRetriever{Retriever: e.Selector().Retriever, started: make(chan struct{})}
	e.Selector().Retriever = pr
	b := endedBackend{Backend: New(e), ended: make(chan error, 1)}
	s := server.New(b, server.Config{Tokens: []server.Token{{SHA256: server.HashToken("t-web"), Agent: "web"}}})
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx, leave := context.WithCancel(context.Background())
	text := strings.Repeat("add 1 and 2 then ", 12) + "add 3 and 4"
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/plan", strings.NewReader(`{"text":"`+text+`"}`))
	req.Header.Set("Authorization", "Bearer t-web")
	gone := make(chan struct{})
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		close(gone)
	}()
	<-pr.started
	leave()
	if err := <-b.ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the plan ended with %v, want context.Canceled", err)
	}
	if n := pr.n.Load(); n > 2 {
		t.Errorf("%d retrievals: planning went on after the client left", n)
	}
	<-gone
}

// BenchmarkInputAtItsLimit is the work of one request at the HTTP limits
// (server.DefaultLimits) in no-LLM mode: a selection of 8 KiB of text, a
// plan of 4 KiB in 16 parts — what one token of the rate limit per KiB
// (per 256 bytes for plans) pays for.
func BenchmarkInputAtItsLimit(b *testing.B) {
	_, _, e := newServedEngineWith(b, servedOptions{})
	be := New(e)
	sentence := "please read the report in documents and compare the numbers "
	for _, c := range []struct {
		name string
		n    int
		plan bool
	}{
		{"select/1KiB", 1 << 10, false},
		{"select/8KiB", 8 << 10, false},
		{"plan/4KiB-16parts", 4 << 10, true},
		{"plan/1KiB-16parts", 1 << 10, true},
	} {
		text := strings.Repeat(sentence, c.n/len(sentence)+1)[:c.n]
		if c.plan {
			// As many parts as the limit allows: sentences, the last one
			// long.
			parts := strings.Repeat("add 1 and 2. ", server.DefaultLimits.PlanParts-1)
			text = (parts + strings.Repeat(sentence, c.n))[:c.n]
		}
		run := func(ctx context.Context) error {
			if c.plan {
				_, err := be.Plan(ctx, "web", text)
				return err
			}
			_, err := be.Select(ctx, "web", text)
			return err
		}
		ctx := server.WithPlanParts(context.Background(), server.DefaultLimits.PlanParts)
		var tl *server.TooLarge
		if err := run(ctx); errors.As(err, &tl) {
			b.Fatalf("%s: refused: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = run(ctx)
			}
		})
	}
}
