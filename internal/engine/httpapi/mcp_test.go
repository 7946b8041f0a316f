package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine/enginetest"
	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient connects the go-sdk's client to the served engine's /mcp with
// token.
func mcpClient(t testing.TB, base, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: tokenRT{token}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "engine-test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type tokenRT struct{ tok string }

func (r tokenRT) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.tok)
	return http.DefaultTransport.RoundTrip(req)
}

// auditCalls are caller:tool:outcome of every record in the audit log.
var auditCalls = enginetest.AuditCalls

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func TestMCPOverServeIsTheTokensAgent(t *testing.T) {
	base, cfg, e := newServedEngineWith(t, servedOptions{mcp: true})
	ctx := context.Background()

	// No token: 401 that says what to send.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "Authorization: Bearer") {
		t.Fatalf("no token: %d %s", resp.StatusCode, body)
	}

	// nobody holds no capability: the space tools are neither listed nor
	// callable, exactly as the selector's context leaves them out.
	nobody := mcpClient(t, base, "t-nobody")
	lt, err := nobody.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ctxNames []string
	for _, en := range e.CallableTools("nobody") {
		ctxNames = append(ctxNames, en.Tool.Name)
	}
	got := names(lt.Tools)
	slices.Sort(got)
	slices.Sort(ctxNames)
	ctxNames = slices.Compact(ctxNames)
	if !slices.Equal(got, ctxNames) {
		t.Errorf("nobody's tools/list = %v, the selector's context = %v", got, ctxNames)
	}
	if slices.Contains(got, "pdf-extract") || slices.Contains(got, "list-files") {
		t.Errorf("nobody lists a space tool: %v", got)
	}
	r, err := nobody.CallTool(ctx, &mcp.CallToolParams{Name: "pdf-extract", Arguments: map[string]any{"space": "documents", "path": "quotes/acme-2024.pdf"}})
	if err == nil && !r.IsError {
		t.Fatalf("nobody called pdf-extract: %+v", r)
	}

	// web reads the space: its call is the pipeline's, audited as web's.
	web := mcpClient(t, base, "t-web")
	r, err = web.CallTool(ctx, &mcp.CallToolParams{Name: "pdf-extract", Arguments: map[string]any{"space": "documents", "path": "quotes/acme-2024.pdf"}})
	if err != nil || r.IsError {
		t.Fatalf("web's pdf-extract: %+v, %v", r, err)
	}
	if txt := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "Pro plan") {
		t.Errorf("pdf-extract's text = %s", txt)
	}
	// A call that the schema stage refuses comes back as an error result
	// with the kind, not as a protocol failure.
	r, err = web.CallTool(ctx, &mcp.CallToolParams{Name: "calculator", Arguments: map[string]any{"expr": "1"}})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "schema") {
		t.Errorf("a call with a wrong argument: %+v, %v", r, err)
	}

	// Resources: the space's PDFs, read as their text through pdf-extract.
	lr, err := web.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var pdf string
	for _, res := range lr.Resources {
		if strings.HasSuffix(res.URI, "/quotes/acme-2025.pdf") {
			pdf = res.URI
		}
	}
	if pdf == "" {
		t.Fatalf("web's resources lack the 2025 quote: %+v", lr.Resources)
	}
	rr, err := web.ReadResource(ctx, &mcp.ReadResourceParams{URI: pdf})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "$30 per month") {
		t.Fatalf("reading %s: %+v, %v", pdf, rr, err)
	}
	if lr, err := nobody.ListResources(ctx, nil); err != nil || len(lr.Resources) != 0 {
		t.Errorf("nobody's resources = %+v, %v", lr, err)
	}

	calls := auditCalls(t, cfg)
	for _, w := range []string{"web:pdf-extract:ok", "web:list-files:ok"} {
		if !slices.Contains(calls, w) {
			t.Errorf("the audit log lacks %s: %v", w, calls)
		}
	}
	for _, c := range calls {
		if strings.HasPrefix(c, "nobody:pdf-extract:ok") {
			t.Errorf("nobody's pdf-extract ran: %v", calls)
		}
	}
}

// BenchmarkMCPToolsList1000 is one client's whole tools/list (every page)
// of 1,000 registered tools plus the builtins, through /mcp on the served
// engine: bearer-token authentication, the SDK's streamable HTTP
// transport over a real socket, the caller's capability-filtered list.
func BenchmarkMCPToolsList1000(b *testing.B) {
	const n = 1000
	base, _, _ := newServedEngineWith(b, servedOptions{mcp: true, register: func(reg *pipeline.Registry, _ *config.Config) {
		h := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
			return json.RawMessage(`{}`), nil
		})
		for i := range n {
			t := pipeline.Tool{Name: fmt.Sprintf("bench-tool-%04d", i), Version: "1.0.0", Trust: pipeline.TL2, LatencyClass: pipeline.Fast,
				Description: fmt.Sprintf("Benchmark tool %d: looks up record %d in the inventory and returns its fields.", i, i),
				Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"the record id"},"limit":{"type":"integer","minimum":1}},"required":["id"],"additionalProperties":false}`)}
			if err := reg.Register("bench", t, h); err != nil {
				b.Fatal(err)
			}
		}
	}})
	ctx := context.Background()
	// The go-sdk's client validates every tool it receives, which costs
	// more than serving the list: "raw" is the server's side alone (one
	// POST per page over a session, the answer read and parsed).
	b.Run("go-sdk-client", func(b *testing.B) {
		cs := mcpClient(b, base, "t-web")
		count := func() int {
			total, cursor := 0, ""
			for {
				res, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
				if err != nil {
					b.Fatal(err)
				}
				total += len(res.Tools)
				if cursor = res.NextCursor; cursor == "" {
					return total
				}
			}
		}
		if got := count(); got < n {
			b.Fatalf("tools/list gave %d tools, want at least %d", got, n)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			count()
		}
	})
	b.Run("raw", func(b *testing.B) {
		sid := rawMCP(b, base, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`, nil)
		rawMCP(b, base, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		count := func() int {
			total, cursor := 0, ""
			for id := 1; ; id++ {
				params := "{}"
				if cursor != "" {
					params = `{"cursor":"` + cursor + `"}`
				}
				var res struct {
					Result struct {
						Tools      []json.RawMessage `json:"tools"`
						NextCursor string            `json:"nextCursor"`
					} `json:"result"`
				}
				rawMCP(b, base, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, id, params), &res)
				total += len(res.Result.Tools)
				if cursor = res.Result.NextCursor; cursor == "" {
					return total
				}
			}
		}
		if got := count(); got < n {
			b.Fatalf("tools/list gave %d tools, want at least %d", got, n)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			count()
		}
	})
}

// rawMCP POSTs one JSON-RPC message to /mcp as web and decodes the answer
// (JSON, or the one "data:" event of an SSE answer) into out; it returns
// the session id the server gave.
func rawMCP(b testing.TB, base, sid, msg string, out any) string {
	b.Helper()
	req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(msg))
	req.Header.Set("Authorization", "Bearer t-web")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode >= 300 {
		b.Fatalf("POST /mcp: %d %v %.300s", resp.StatusCode, err, body)
	}
	if out != nil {
		data := body
		if i := bytes.Index(body, []byte("data: ")); i >= 0 {
			data = body[i+len("data: "):]
			if j := bytes.IndexByte(data, '\n'); j >= 0 {
				data = data[:j]
			}
		}
		if err := json.Unmarshal(data, out); err != nil {
			b.Fatalf("decoding %.300s: %v", data, err)
		}
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		return s
	}
	return sid
}
