//go:build unix

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// registryBackend offers every registered tool and calls through a
// Manager: an outside server's tools, relayed.
type registryBackend struct {
	reg *pipeline.Registry
	m   *pipeline.Manager
}

func (b registryBackend) Tools(string) []pipeline.Tool {
	var out []pipeline.Tool
	for _, r := range b.reg.List() {
		out = append(out, r.Tool)
	}
	return out
}

func (b registryBackend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.m.Call(ctx, req)
}

// TestOutsideResultsPassThrough: a tool of an outside MCP server (a real
// process), called through AIRS's MCP server — in memory, and over
// streamable HTTP with no standalone stream, so that progress must come
// on the call's own — answers what that server answered: every content
// block with its type, structuredContent; its outputSchema is listed, and
// its progress reaches the client that asked.
func TestOutsideResultsPassThrough(t *testing.T) {
	for _, over := range []string{"memory", "http"} {
		t.Run(over, func(t *testing.T) { testPassThrough(t, over) })
	}
}

func testPassThrough(t *testing.T, over string) {
	ctx := context.Background()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	up, err := client.Connect(ctx, reg, client.Server{Name: "up", Command: mcptest.Command(), Env: mcptest.Env(filepath.Join(t.TempDir(), "events"), 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	type note struct {
		tok      any
		progress float64
		msg      string
	}
	var mu sync.Mutex
	var notes []note
	got3 := make(chan struct{})
	co := &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			notes = append(notes, note{r.Params.ProgressToken, r.Params.Progress, r.Params.Message})
			if len(notes) == 3 {
				close(got3)
			}
		}}
	b := registryBackend{reg, m}
	var cs *mcp.ClientSession
	if over == "memory" {
		_, cs = connectOpts(t, b, "alice", Options{}, co)
	} else {
		h := NewHTTPHandler(b, func(r *http.Request) string {
			if r.Header.Get("Authorization") == "Bearer tok-alice" {
				return "alice"
			}
			return ""
		}, Options{})
		t.Cleanup(h.Close)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "t"}, co).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: srv.URL, HTTPClient: bearerClient("tok-alice"), DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
	}

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var media *mcp.Tool
	for _, tl := range tools.Tools {
		if tl.Name == "up.media" {
			media = tl
		}
	}
	if media == nil || media.OutputSchema == nil {
		t.Fatalf("up.media listed without its outputSchema: %+v", media)
	}
	if b, _ := json.Marshal(media.OutputSchema); !bytes.Contains(b, []byte(`"blocks"`)) {
		t.Fatalf("outputSchema = %s", b)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up.media", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("media: %v %+v", err, res)
	}
	if len(res.Content) != 5 {
		t.Fatalf("%d content blocks, want 5: %+v", len(res.Content), res.Content)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "five blocks" {
		t.Errorf("block 0: %#v", res.Content[0])
	}
	if ic, ok := res.Content[1].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || string(ic.Data) != "\x89PNG fake" {
		t.Errorf("block 1: %#v", res.Content[1])
	}
	if ac, ok := res.Content[2].(*mcp.AudioContent); !ok || ac.MIMEType != "audio/wav" || string(ac.Data) != "RIFF fake" {
		t.Errorf("block 2: %#v", res.Content[2])
	}
	if rl, ok := res.Content[3].(*mcp.ResourceLink); !ok || rl.URI != "mcptest://greeting" {
		t.Errorf("block 3: %#v", res.Content[3])
	}
	if er, ok := res.Content[4].(*mcp.EmbeddedResource); !ok || er.Resource == nil || er.Resource.Text != "hello from mcptest" {
		t.Errorf("block 4: %#v", res.Content[4])
	}
	if sc, _ := json.Marshal(res.StructuredContent); string(sc) != `{"blocks":5}` {
		t.Errorf("structuredContent = %s", sc)
	}

	p := &mcp.CallToolParams{Name: "up.progress", Arguments: map[string]any{"n": 3}}
	p.SetProgressToken("downstream-1")
	res, err = cs.CallTool(ctx, p)
	if err != nil || res.IsError {
		t.Fatalf("progress: %v %+v", err, res)
	}
	select {
	case <-got3:
	case <-time.After(10 * time.Second):
		t.Fatalf("progress notifications: got %d of 3", len(notes))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range notes {
		if n.tok != "downstream-1" || n.progress != float64(i+1) || n.msg == "" {
			t.Errorf("notification %d = %+v (want the client's own token, progress %d)", i, n, i+1)
		}
	}
}
