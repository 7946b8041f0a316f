package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// realBackend is the Backend the engine builds, from real parts: the
// builtin tools over real folders, the selector's RegistryCatalog for
// the caller's tools, the Manager for calls, the registry's Watch.
type realBackend struct {
	reg *pipeline.Registry
	m   *pipeline.Manager
	cat *selector.RegistryCatalog
	aud *memAudit
}

func (b *realBackend) Tools(caller string) []pipeline.Tool {
	var out []pipeline.Tool
	for _, e := range b.cat.Callable(caller) {
		out = append(out, e.Tool)
	}
	return out
}

func (b *realBackend) Call(ctx context.Context, req pipeline.Request) (*pipeline.Result, error) {
	return b.m.Call(ctx, req)
}

func (b *realBackend) Watch() (<-chan struct{}, func()) { return b.reg.Watch() }

// memAudit keeps the audit records, to see which calls a request made.
type memAudit struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (a *memAudit) Append(r *audit.Record) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.recs = append(a.recs, *r)
	return nil
}

func (a *memAudit) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, r := range a.recs {
		out = append(out, r.Caller+":"+r.Tool+":"+r.Outcome)
	}
	return out
}

// newReal has two spaces, docs (read by alice and bob) and vault (alice
// only); carol holds nothing.
func newReal(t *testing.T) (*realBackend, map[string]string) {
	t.Helper()
	root := t.TempDir()
	spaces := map[string]string{"docs": filepath.Join(root, "docs"), "vault": filepath.Join(root, "vault")}
	files := map[string]string{
		"docs/a.txt": "alpha", "docs/b.md": "# bee", "docs/sub/c.txt": "see", "docs/sub/deeper/d.txt": "dee",
		"docs/e.csv": "x,y", "vault/secret.txt": "the code is 42",
	}
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := &pipeline.StaticPolicy{
		Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{
			"alice": {{Kind: "ReadSpace", Arg: "docs"}, {Kind: "ReadSpace", Arg: "vault"}},
			"bob":   {{Kind: "ReadSpace", Arg: "docs"}},
		},
	}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: spaces, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	aud := &memAudit{}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol, Audit: aud})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return &realBackend{reg: reg, m: m, cat: &selector.RegistryCatalog{Registry: reg, Policy: pol}, aud: aud}, files
}

// connectOpts connects a go-sdk client to caller's server over in-memory
// transports.
func connectOpts(t *testing.T, b Backend, caller string, o Options, co *mcp.ClientOptions) (*Server, *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	s := New(b, caller, o)
	t.Cleanup(s.Close)
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, co).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return s, cs
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range res.Tools {
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

func TestToolsFollowRegistryWithListChanged(t *testing.T) {
	b, _ := newReal(t)
	changed := make(chan struct{}, 10)
	_, cs := connectOpts(t, b, "bob", Options{}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	if got := toolNames(t, cs); slices.Contains(got, "fresh") {
		t.Fatalf("fresh listed before it is registered: %v", got)
	}
	fresh := pipeline.Tool{Name: "fresh", Version: "1.0.0", Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL2, LatencyClass: pipeline.Fast}
	echo := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
		return json.RawMessage(`{"fresh":true}`), nil
	})
	if err := b.reg.Register("late", fresh, echo); err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		select {
		case <-changed:
		case <-time.After(5 * time.Second):
			t.Fatalf("no notifications/tools/list_changed after %s", what)
		}
	}
	wait("a registration")
	if got := toolNames(t, cs); !slices.Contains(got, "fresh") {
		t.Fatalf("tools/list after the registration = %v", got)
	}
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{}})
	if err != nil || r.IsError {
		t.Fatalf("calling the new tool: %+v, %v", r, err)
	}
	b.reg.DeregisterProvider("late")
	wait("a removal")
	if got := toolNames(t, cs); slices.Contains(got, "fresh") {
		t.Fatalf("tools/list after the removal = %v", got)
	}
	r, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fresh", Arguments: map[string]any{}})
	if err == nil && !r.IsError {
		t.Fatal("a removed tool was still callable")
	}
}

func TestToolsCapabilityFilteredAndNotCallable(t *testing.T) {
	b, _ := newReal(t)
	_, carol := connectOpts(t, b, "carol", Options{}, nil)
	got := toolNames(t, carol)
	for _, n := range []string{"read-file", "list-files", "pdf-extract", "delete-file"} {
		if slices.Contains(got, n) {
			t.Errorf("carol holds no ReadSpace, yet %s is listed: %v", n, got)
		}
	}
	if !slices.Contains(got, "calculator") {
		t.Errorf("calculator needs nothing and is not listed: %v", got)
	}
	r, err := carol.CallTool(context.Background(), &mcp.CallToolParams{Name: "read-file", Arguments: map[string]any{"space": "docs", "path": "a.txt"}})
	if err == nil && !r.IsError {
		t.Fatalf("carol called read-file: %+v", r)
	}
	// bob lists read-file, but only for docs: the pipeline refuses vault.
	_, bob := connectOpts(t, b, "bob", Options{}, nil)
	r, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "read-file", Arguments: map[string]any{"space": "vault", "path": "secret.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt := r.Content[0].(*mcp.TextContent).Text; !r.IsError || strings.Contains(txt, "42") {
		t.Fatalf("bob read the vault: %v %q", r.IsError, txt)
	}
}

// allResources pages through resources/list, checking every page's size.
func allResources(t *testing.T, cs *mcp.ClientSession, page int) []string {
	t.Helper()
	var out []string
	cursor := ""
	for range 100 {
		res, err := cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Resources) > page {
			t.Fatalf("a page of %d resources, the page size is %d", len(res.Resources), page)
		}
		for _, r := range res.Resources {
			out = append(out, r.URI)
		}
		if cursor = res.NextCursor; cursor == "" {
			slices.Sort(out)
			return out
		}
	}
	t.Fatal("resources/list never ended")
	return nil
}

func TestResourcesArePagedSpaceFilesTheCallerMayRead(t *testing.T) {
	b, files := newReal(t)
	want := func(spaces ...string) []string {
		var out []string
		for p := range files {
			sp, rest, _ := strings.Cut(p, "/")
			if slices.Contains(spaces, sp) {
				out = append(out, resourceURI(sp, rest))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, page := range []int{1, 2, 100} {
		_, alice := connectOpts(t, b, "alice", Options{PageSize: page}, nil)
		if got, w := allResources(t, alice, page), want("docs", "vault"); !slices.Equal(got, w) {
			t.Errorf("page size %d: alice's resources =\n%v\nwant\n%v", page, got, w)
		}
	}
	_, bob := connectOpts(t, b, "bob", Options{PageSize: 2}, nil)
	if got, w := allResources(t, bob, 2), want("docs"); !slices.Equal(got, w) {
		t.Errorf("bob's resources = %v, want %v (no vault)", got, w)
	}
	_, carol := connectOpts(t, b, "carol", Options{}, nil)
	if got := allResources(t, carol, 100); len(got) != 0 {
		t.Errorf("carol may read no space, yet has resources %v", got)
	}
	// Listing is list-files calls as the caller, audited.
	if calls := b.aud.calls(); !slices.Contains(calls, "bob:list-files:ok") {
		t.Errorf("bob's listing is not in the audit log: %v", calls)
	}
	// A cursor is only ever one the server gave.
	if _, err := bob.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: cursor{Space: "vault"}.encode()}); err == nil {
		t.Error("bob paged into the vault with a forged cursor")
	}
}

func TestResourceReadGoesThroughReadFile(t *testing.T) {
	b, _ := newReal(t)
	_, bob := connectOpts(t, b, "bob", Options{}, nil)
	ctx := context.Background()
	res, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: resourceURI("docs", "sub/c.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].Text != "see" {
		t.Fatalf("contents = %+v", res.Contents)
	}
	for _, uri := range []string{
		resourceURI("vault", "secret.txt"), // a space bob may not read
		"airs://docs/../vault/secret.txt",  // an escape
		"file:///etc/passwd",               // not ours
		"airs://docs/",                     // no file
	} {
		if r, err := bob.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("bob read %s: %+v", uri, r.Contents)
		}
	}
	calls := b.aud.calls()
	if !slices.Contains(calls, "bob:read-file:ok") {
		t.Errorf("the read is not in the audit log: %v", calls)
	}
	if !slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "bob:read-file:") && c != "bob:read-file:ok" }) {
		t.Errorf("the refused read of the vault is not in the audit log: %v", calls)
	}
}

const pipelineYAML = `pipeline: %s
description: %s
inputs:
  space: {type: string, default: docs, description: the space}
  path: {type: string, description: the file}
steps:
  - id: read
    tool: %s
    params: {space: "{{input.space}}", path: "{{input.path}}"}
`

func TestPipelinesArePromptsOfTheirCallers(t *testing.T) {
	b, _ := newReal(t)
	dir := t.TempDir()
	write := func(file, body string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("read.yaml", fmt.Sprintf(pipelineYAML, "read-one", "Read one file of a space.", "read-file"))
	write("calc.yml", "pipeline: add\ndescription: Add.\nsteps:\n  - id: c\n    tool: calculator\n    params: {expression: \"1+1\"}\n")
	write("broken.yaml", "pipeline: [nope\n")
	write("notes.txt", "not a pipeline")
	ctx := context.Background()

	_, bob := connectOpts(t, b, "bob", Options{Pipelines: []string{dir}}, nil)
	lp, err := bob.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range lp.Prompts {
		names = append(names, p.Name)
		if p.Name == "read-one" {
			if p.Description != "Read one file of a space." || len(p.Arguments) != 2 {
				t.Errorf("read-one = %+v", p)
			}
			for _, a := range p.Arguments {
				if a.Required != (a.Name == "path") {
					t.Errorf("argument %s required = %v (only path has no default)", a.Name, a.Required)
				}
			}
		}
	}
	if !slices.Equal(names, []string{"add", "read-one"}) {
		t.Fatalf("bob's prompts = %v", names)
	}
	g, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: "read-one", Arguments: map[string]string{"path": "my notes.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	txt := g.Messages[0].Content.(*mcp.TextContent).Text
	for _, w := range []string{"Read one file of a space.", `path = "my notes.txt"`, "space = docs (default)", "1. read: the tool read-file", "--input path='my notes.txt'"} {
		if !strings.Contains(txt, w) {
			t.Errorf("the prompt lacks %q:\n%s", w, txt)
		}
	}
	if g.Description != "Read one file of a space." {
		t.Errorf("description = %q", g.Description)
	}
	if _, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: "read-one"}); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("a missing required argument: %v", err)
	}
	if _, err := bob.GetPrompt(ctx, &mcp.GetPromptParams{Name: "read-one", Arguments: map[string]string{"path": "x", "colour": "red"}}); err == nil || !strings.Contains(err.Error(), "colour") {
		t.Errorf("an unknown argument: %v", err)
	}

	// carol may not call read-file: its pipeline is not hers.
	_, carol := connectOpts(t, b, "carol", Options{Pipelines: []string{dir}}, nil)
	lp, err = carol.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lp.Prompts) != 1 || lp.Prompts[0].Name != "add" {
		t.Errorf("carol's prompts = %+v", lp.Prompts)
	}
	if _, err := carol.GetPrompt(ctx, &mcp.GetPromptParams{Name: "read-one", Arguments: map[string]string{"path": "a.txt"}}); err == nil {
		t.Error("carol got a pipeline whose tools she may not call")
	}
}

func TestHTTPSessionBelongsToItsAgent(t *testing.T) {
	b, _ := newReal(t)
	// The channel's authentication, as airs serve's: a token names the agent.
	agents := map[string]string{"tok-bob": "bob", "tok-carol": "carol"}
	h := NewHTTPHandler(b, func(r *http.Request) string {
		return agents[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	}, Options{})
	t.Cleanup(h.Close)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	connect := func(tok string, hc *http.Client) (*mcp.ClientSession, error) {
		return mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	}
	bob, err := connect("tok-bob", bearerClient("tok-bob"))
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	if got := toolNames(t, bob); !slices.Contains(got, "read-file") {
		t.Fatalf("bob's tools over HTTP = %v", got)
	}
	// carol's token on bob's session: refused, whatever the session id.
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok-carol")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", bob.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("carol on bob's session: %d, want 403", resp.StatusCode)
	}
	if _, err := connect("", http.DefaultClient); err == nil {
		t.Error("a client without a token connected")
	}
}

// bearerClient sends the token on every request.
func bearerClient(tok string) *http.Client {
	return &http.Client{Transport: bearerRT{tok, http.DefaultTransport}}
}

type bearerRT struct {
	tok string
	rt  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return b.rt.RoundTrip(r)
}

// TestDestructiveCallWaitsForAPersonThenRuns: with the real guard as the
// pipeline's intent gate, a delete-file over MCP is held and says how to
// approve it; once approved, the same call runs and the file is gone.
func TestDestructiveCallWaitsForAPersonThenRuns(t *testing.T) {
	root := t.TempDir()
	docs := filepath.Join(root, "docs")
	os.MkdirAll(docs, 0o755)
	victim := filepath.Join(docs, "old.txt")
	os.WriteFile(victim, []byte("bye"), 0o644)
	pol := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}, Capabilities: map[string][]pipeline.Capability{
		"alice": {{Kind: "ReadSpace", Arg: "docs"}, {Kind: "WriteSpace", Arg: "docs"}}}}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := builtin.Register(reg, builtin.Options{Spaces: map[string]string{"docs": docs}, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	g, err := guard.New(guard.Config{Dir: filepath.Join(root, "guard")})
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := &realBackend{reg: reg, m: m, cat: &selector.RegistryCatalog{Registry: reg, Policy: pol}}
	_, alice := connectOpts(t, b, "alice", Options{}, nil)
	ctx := context.Background()
	del := &mcp.CallToolParams{Name: "delete-file", Arguments: map[string]any{"space": "docs", "path": "old.txt"}}
	r, err := alice.CallTool(ctx, del)
	if err != nil {
		t.Fatal(err)
	}
	txt := r.Content[0].(*mcp.TextContent).Text
	if !r.IsError || !strings.Contains(txt, "airs review approve ") {
		t.Fatalf("the destructive call was not held: %v %q", r.IsError, txt)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatalf("the file went before anyone approved: %v", err)
	}
	id := strings.Fields(txt[strings.Index(txt, "airs review approve ")+len("airs review approve "):])[0]
	id = strings.TrimSuffix(id, "',")
	if _, err := g.Decide(id, guard.Once, "operator"); err != nil {
		t.Fatalf("approving %q: %v", id, err)
	}
	r, err = alice.CallTool(ctx, del)
	if err != nil || r.IsError {
		t.Fatalf("the approved call: %+v, %v", r, err)
	}
	if _, err := os.Stat(victim); !os.IsNotExist(err) {
		t.Errorf("the approved delete left the file: %v", err)
	}
}
