//go:build unix

package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
)

// The test binary is also the MCP test server (mcptest).
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}

// TestMCPServersThroughTheEngine starts an outside MCP server from
// airs.yaml as `airs` does, and checks that its tools are providers like
// the builtins: granted by MCP(NAME) and requires only, called through the
// pipeline, in the index, and reindexed when the server's list changes.
func TestMCPServersThroughTheEngine(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	t.Setenv("AIRS_TEST_PASSED", "given")
	t.Setenv("AIRS_TEST_SECRET", "hunter2")
	dir := t.TempDir()
	argv := mcptest.Command()
	yaml := fmt.Sprintf(`home: ./state
spaces: {documents: ./docs}
agents:
  granted: {capabilities: ["MCP(t)", "ReadSpace(documents)"]}
  halfway: {capabilities: ["ReadSpace(*)", "Network(*)"]}
mcp:
  servers:
    t:
      command: [%q, %q]
      env: {%s: "1", %s: %q}
      pass_env: [AIRS_TEST_PASSED]
      requires: ["ReadSpace(documents)"]
    broken:
      command: [%q]
`, argv[0], argv[1], mcptest.EnvServe, mcptest.EnvLog, filepath.Join(dir, "events"), filepath.Join(dir, "no-such-server"))
	os.Mkdir(filepath.Join(dir, "docs"), 0o755)
	cfg := writeConfig(t, dir, yaml)
	policy := settings.Policy(cfg)
	reg, err := Registry(cfg, policy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mcp := StartMCP(ctx, cfg, reg, nil, "test")
	defer mcp.Close()
	// One server that does not start is a problem, not a failure.
	if ps := mcp.Problems(); len(ps) != 1 || !strings.Contains(ps[0].Error(), "mcp server broken") {
		t.Fatalf("problems = %v", ps)
	}
	if mcp.Conn("t") == nil {
		t.Fatal("server t not connected")
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Policy = reg, policy
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, err := New(ctx, cfg, reg, m, policy, Options{Channel: "run", Model: "none", MCP: mcp})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	callable := func(caller, tool string) bool {
		for _, c := range e.catalog.Callable(caller) {
			if c.Tool.Name == tool {
				return true
			}
		}
		return false
	}
	if !callable("granted", "t.echo") || callable("halfway", "t.echo") {
		t.Fatalf("t.echo callable: granted %v, halfway %v (want true, false)", callable("granted", "t.echo"), callable("halfway", "t.echo"))
	}
	res, err := e.Call(ctx, pipeline.Request{Tool: "t.echo", Params: []byte(`{"s":"via engine"}`), Caller: "granted"})
	if err != nil || string(res.Output) != `{"echo":"via engine"}` {
		t.Fatalf("call: %v %v", err, res)
	}
	// The server's environment: what pass_env names, not the rest of AIRS's.
	for name, want := range map[string]string{"AIRS_TEST_PASSED": `{"set":true,"value":"given"}`, "AIRS_TEST_SECRET": `{"set":false,"value":""}`} {
		res, err := e.Call(ctx, pipeline.Request{Tool: "t.getenv", Params: []byte(`{"name":"` + name + `"}`), Caller: "granted"})
		if err != nil || string(res.Output) != want {
			t.Errorf("$%s in the server: %v %v, want %s", name, err, res, want)
		}
	}
	if _, err := e.Call(ctx, pipeline.Request{Tool: "t.echo", Params: []byte(`{"s":"x"}`), Caller: "halfway"}); pipeline.KindOf(err) != pipeline.KindToolCapabilityDenied ||
		!strings.Contains(err.Error(), "MCP(t)") {
		t.Fatalf("ungranted call: %v", err)
	}
	if _, ok := e.index.Doc("t.echo"); !ok {
		t.Fatal("t.echo is not in the tool index")
	}
	// Sampling: refused in no-LLM mode, answered by the model once there is one.
	if _, err := e.Call(ctx, pipeline.Request{Tool: "t.sample", Params: []byte(`{"text":"hi"}`), Caller: "granted"}); err == nil ||
		!strings.Contains(err.Error(), "no-LLM mode") {
		t.Fatalf("sampling in no-LLM mode: %v", err)
	}
	sm := &samplingModel{reply: "hello back", reason: "length"}
	e.model, e.modelName = ollamamodel.New(sm), "tiny"
	mcp.SetSampler(e.mcpSampler())
	res, err = e.Call(ctx, pipeline.Request{Tool: "t.sample", Params: []byte(`{"text":"hi","max_tokens":7}`), Caller: "granted"})
	if err != nil || string(res.Output) != `{"model":"tiny","stop":"maxTokens","text":"hello back"}` {
		t.Fatalf("sampling through the model: %v %s", err, res.Output)
	}
	if r := sm.last(); r.Model != "tiny" || r.Options.NumPredict != 7 || len(r.Messages) != 2 ||
		r.Messages[0] != (ollama.Message{Role: "system", Content: "Be brief."}) || r.Messages[1] != (ollama.Message{Role: "user", Content: "hi"}) {
		t.Fatalf("the model got %+v", r)
	}
	// Prompts: listed and got for a caller holding MCP(t), refused to one without.
	if ps, err := e.MCPPrompts(ctx, "granted"); err != nil || len(ps) != 1 || ps[0].Server != "t" || ps[0].Name != "greet" {
		t.Fatalf("prompts for granted: %v %+v", err, ps)
	}
	if ps, _ := e.MCPPrompts(ctx, "halfway"); len(ps) != 0 {
		t.Fatalf("prompts for halfway (no MCP(t)): %+v", ps)
	}
	if text, err := e.MCPPrompt(ctx, "granted", "t", "greet", map[string]string{"who": "Ada"}); err != nil || text != "Please greet Ada." {
		t.Fatalf("prompt: %v %q", err, text)
	}
	if _, err := e.MCPPrompt(ctx, "halfway", "t", "greet", map[string]string{"who": "Ada"}); err == nil || !strings.Contains(err.Error(), "grant it MCP(t)") {
		t.Fatalf("prompt for halfway: %v", err)
	}
	if _, ok := e.index.Doc("t.late"); ok {
		t.Fatal("t.late indexed before it exists")
	}
	if _, err := e.Call(ctx, pipeline.Request{Tool: "t.addtool", Params: []byte(`{}`), Caller: "granted"}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, ok := e.index.Doc("t.late"); ok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("list_changed did not reach the index")
		}
	}
}

// samplingModel is an ollama.Client that answers every chat with reply,
// recording the requests (onChunk may be nil, as the interface allows).
type samplingModel struct {
	mu     sync.Mutex
	reply  string
	reason string
	got    []ollama.ChatRequest
}

func (f *samplingModel) Chat(ctx context.Context, req ollama.ChatRequest, on func(string) error) (ollama.ChatResponse, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	if on != nil {
		if err := on(f.reply); err != nil {
			return ollama.ChatResponse{}, err
		}
	}
	return ollama.ChatResponse{Content: f.reply, Done: true, DoneReason: f.reason}, nil
}

func (f *samplingModel) last() ollama.ChatRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		return ollama.ChatRequest{}
	}
	return f.got[len(f.got)-1]
}

func (f *samplingModel) Embed(context.Context, string, []string) ([][]float32, error) {
	return nil, fmt.Errorf("samplingModel: no embeddings")
}
func (f *samplingModel) Ping(context.Context) error               { return nil }
func (f *samplingModel) Version(context.Context) (string, error)  { return "fake", nil }
func (f *samplingModel) Models(context.Context) ([]string, error) { return []string{"tiny"}, nil }

// TestMCPServerSamplingLimits: airs.yaml's sampling keys reach the client.
func TestMCPServerSamplingLimits(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	yaml := "mcp:\n  sampling: {max_tokens: 99, timeout: 7s}\n  servers:\n    a: {command: [x]}\n    b: {command: [x], sampling: {enabled: false}}\n"
	cfg, err := config.Parse(filepath.Join(t.TempDir(), "airs.yaml"), []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := MCPServer(cfg.MCP.Servers["a"], nil, "test")
	b, _ := MCPServer(cfg.MCP.Servers["b"], nil, "test")
	if a.MaxSampleTokens != 99 || a.SampleTimeout != 7*time.Second || a.NoSampling || !b.NoSampling || b.MaxSampleTokens != 99 {
		t.Fatalf("a = %d %v %v, b no-sampling %v", a.MaxSampleTokens, a.SampleTimeout, a.NoSampling, b.NoSampling)
	}
}
