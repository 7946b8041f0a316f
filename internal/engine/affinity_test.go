package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard/affinity"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// fakeOllama answers /api/version and /api/chat as Ollama does, and
// records each chat request's message count and keep_alive.
type fakeOllama struct {
	*httptest.Server
	mu    sync.Mutex
	chats []fakeChat
}

type fakeChat struct {
	messages  int
	keepAlive string
	numCtx    float64
}

func newFakeOllama(t *testing.T) *fakeOllama {
	f := &fakeOllama{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			fmt.Fprint(w, `{"version":"0.17.4"}`)
		case "/api/chat":
			var req struct {
				Messages  []json.RawMessage `json:"messages"`
				KeepAlive *string           `json:"keep_alive"`
				Options   map[string]any    `json:"options"`
			}
			json.NewDecoder(r.Body).Decode(&req)
			c := fakeChat{messages: len(req.Messages)}
			c.numCtx, _ = req.Options["num_ctx"].(float64)
			if req.KeepAlive != nil {
				c.keepAlive = *req.KeepAlive
			}
			f.mu.Lock()
			f.chats = append(f.chats, c)
			f.mu.Unlock()
			reason := "stop"
			if len(req.Messages) == 0 {
				reason = "load"
			}
			fmt.Fprintf(w, `{"model":"m","message":{"role":"assistant","content":""},"done":true,"done_reason":%q}`+"\n", reason)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeOllama) seen() []fakeChat {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeChat(nil), f.chats...)
}

// warmTool is a handler with a start cost (pipeline.Warmer) that counts
// its warms.
type warmTool struct{ warmed atomic.Int32 }

func (w *warmTool) Invoke(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}
func (w *warmTool) Warm(context.Context) error { w.warmed.Add(1); return nil }

type affEnv struct {
	t    *testing.T
	cfg  *config.Config
	warm *warmTool
	reg  *pipeline.Registry
}

func newAffEnv(t *testing.T, yaml string) *affEnv {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AIRS_HOME", "")
	cfg, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte("home: ./state\nspaces: {}\nagents:\n  tester: {}\n  other: {}\n"+yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	return &affEnv{t: t, cfg: cfg}
}

// open starts an engine over the builtins plus "slow-start", a tool whose
// handler has a start cost; model "" is no-LLM mode.
func (v *affEnv) open(channel, model string) *Engine {
	v.t.Helper()
	policy := settings.Policy(v.cfg)
	reg, err := Registry(v.cfg, policy)
	if err != nil {
		v.t.Fatal(err)
	}
	v.warm = &warmTool{}
	if err := reg.Register("ext", pipeline.Tool{Name: "slow-start", Version: "1.0.0", Description: "a tool whose provider takes a while to start",
		Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL1, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true}, v.warm); err != nil {
		v.t.Fatal(err)
	}
	v.reg = reg
	mc := settings.ManagerConfig(v.cfg)
	mc.Policy, mc.Registry = policy, reg
	m, err := pipeline.NewManager(mc)
	if err != nil {
		v.t.Fatal(err)
	}
	v.t.Cleanup(func() { m.Close() })
	if model == "" {
		model = "none"
	}
	e, err := New(context.Background(), v.cfg, reg, m, policy, Options{Channel: channel, Model: model})
	if err != nil {
		v.t.Fatal(err)
	}
	return e
}

func affCall(t *testing.T, e *Engine, caller, tool string, n int) {
	t.Helper()
	for range n {
		if _, err := e.Call(context.Background(), pipeline.Request{Tool: tool, Caller: caller, Params: []byte(`{}`)}); err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
	}
}

// The affinities one run learns are saved at Close and pre-warmed by the
// next start: the tool's provider (Warm) and the selector's Ollama model
// (a load with the configured keep_alive); callers without affinity warm
// nothing.
func TestAffinitySavedAndPrewarmedAtStart(t *testing.T) {
	v := newAffEnv(t, "guard:\n  affinity: {keep_alive: 90s}\n")
	ol := newFakeOllama(t)
	v.cfg.Ollama.Host = ol.URL
	e := v.open("chat", "m")
	if pw, _ := e.WaitPrewarm(context.Background()); pw != (Prewarmed{}) || len(ol.seen()) != 0 {
		t.Fatalf("a first start with no affinities warmed: %+v, Ollama saw %+v", pw, ol.seen())
	}
	gen := func() fakeChat {
		t.Helper()
		err := e.selectorModel().Generate(context.Background(), selector.ModelRequest{Model: "m", Messages: []selector.Message{{Role: "user", Content: "hi"}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := ol.seen()
		return s[len(s)-1]
	}
	if c := gen(); c.messages != 1 || c.keepAlive != "" {
		t.Fatalf("model request without affinity: %+v, want the server's default keep_alive", c)
	}
	affCall(t, e, "tester", "slow-start", 3)
	affCall(t, e, "other", "slow-start", 2) // under the threshold
	waitFor(t, func() bool { return len(e.Affinities()) == 1 })
	// While the affinity lasts, the selector's requests keep the model
	// loaded for keep_alive.
	if c := gen(); c.messages != 1 || c.keepAlive != "1m30s" {
		t.Fatalf("model request with an active affinity: %+v, want keep_alive 1m30s", c)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	as, err := affinity.Load(v.cfg.AffinityFile())
	if err != nil || len(as) != 1 || as[0].Caller != "tester" || as[0].Tool != "slow-start" || as[0].Count != 3 {
		t.Fatalf("saved %v, %v; want tester/slow-start ×3 only", as, err)
	}

	before := len(ol.seen())
	e = v.open("chat", "m")
	defer e.Close()
	pw, err := e.WaitPrewarm(context.Background())
	if err != nil || pw.Err != nil {
		t.Fatalf("prewarm: %+v %v", pw, err)
	}
	if pw.Affinities != 1 || pw.Handlers != 1 || pw.Model != "m" || v.warm.warmed.Load() != 1 {
		t.Fatalf("prewarm %+v, slow-start warmed %d times; want 1 affinity, 1 handler, model m, 1 warm", pw, v.warm.warmed.Load())
	}
	nc := float64(e.sel.Config.WithDefaults().NumCtx)
	if got := ol.seen()[before:]; len(got) != 1 || got[0].messages != 0 || got[0].keepAlive != "1m30s" || got[0].numCtx != nc {
		t.Fatalf("Ollama saw %+v; want one load (no messages) with keep_alive 1m30s and the selector's num_ctx %v", got, nc)
	}
}

// One-shot channels learn and save, but warm nothing (they would pay the
// warm-up themselves); with affinity off nothing is written.
func TestAffinityOneShotAndOff(t *testing.T) {
	v := newAffEnv(t, "")
	e := v.open("run", "")
	affCall(t, e, "tester", "slow-start", 3)
	e.Close()
	e = v.open("run", "")
	if pw, _ := e.WaitPrewarm(context.Background()); pw != (Prewarmed{}) || v.warm.warmed.Load() != 0 {
		t.Fatalf("run pre-warmed: %+v, %d warms", pw, v.warm.warmed.Load())
	}
	if as := e.Affinities(); len(as) != 1 {
		t.Fatalf("run did not seed the saved affinity: %v", as)
	}
	e.Close()

	off := newAffEnv(t, "guard:\n  affinity: {enabled: false}\n")
	e = off.open("chat", "")
	affCall(t, e, "tester", "slow-start", 5)
	e.Close()
	if _, err := os.Stat(off.cfg.AffinityFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("affinity off wrote %s (%v)", off.cfg.AffinityFile(), err)
	}
}

// A corrupt affinity file is moved aside, kept as it was, and said; the
// engine starts with no affinities and saves a good file afterwards.
func TestAffinityCorruptFileSetAside(t *testing.T) {
	v := newAffEnv(t, "")
	path := v.cfg.AffinityFile()
	os.MkdirAll(filepath.Dir(path), 0o700)
	bad := []byte(`{"version":1,"affinities":[{"caller":`)
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	e := v.open("chat", "")
	n := e.AffinityNotice()
	if !strings.Contains(n, path) || !strings.Contains(n, "moved to "+path+".corrupt-") || !strings.Contains(n, "starting with no affinities") {
		t.Fatalf("notice %q: want the file, where it went and what happens", n)
	}
	aside := strings.TrimSuffix(n[strings.Index(n, "moved to ")+len("moved to "):], "; starting with no affinities")
	if b, err := os.ReadFile(aside); err != nil || string(b) != string(bad) {
		t.Fatalf("the bad file at %s: %q %v; want it kept as it was", aside, b, err)
	}
	if len(e.Affinities()) != 0 {
		t.Fatal("affinities from a corrupt file")
	}
	affCall(t, e, "tester", "slow-start", 3)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if as, err := affinity.Load(path); err != nil || len(as) != 1 {
		t.Fatalf("after the restart: %v %v", as, err)
	}
}

// The engine's tool lookups go through the hot cache for pairs with an
// affinity; a deregistered tool is never answered from it.
func TestAffinityHotLookups(t *testing.T) {
	v := newAffEnv(t, "")
	e := v.open("chat", "")
	defer e.Close()
	affCall(t, e, "tester", "slow-start", 3)
	waitFor(t, func() bool { return len(e.Affinities()) == 1 })
	for range 5 {
		if tool, err := e.CallableTool("tester", "slow-start"); err != nil || tool.Name != "slow-start" {
			t.Fatalf("lookup: %v %v", tool, err)
		}
	}
	if h, m, _ := e.affinity.cache.Stats(); h != 4 || m != 1 {
		t.Fatalf("hot cache: %d hits %d misses, want 4 and 1", h, m)
	}
	if _, err := e.CallableTool("other", "slow-start"); err != nil {
		t.Fatal(err)
	}
	if h, m, _ := e.affinity.cache.Stats(); h != 4 || m != 1 {
		t.Fatalf("a caller without affinity went through the cache: %d hits %d misses", h, m)
	}
	var sb strings.Builder
	if err := e.WriteMetrics(&sb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"airs_affinities 1\n", `airs_affinity_lookups_total{result="hit"} 4`, `airs_affinity_lookups_total{result="miss"} 1`} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	v.reg.Deregister("ext", "slow-start", "")
	var nf *pipeline.ToolNotFound
	if _, err := e.CallableTool("tester", "slow-start"); !errors.As(err, &nf) {
		t.Fatalf("after deregistration: %v, want ToolNotFound", err)
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// While an affinity is active, a long-lived engine warms its provider and
// reloads the model over and over (every keep_alive/2).
func TestAffinityKeepAlive(t *testing.T) {
	old := keepAliveEvery
	keepAliveEvery = func(time.Duration) time.Duration { return 5 * time.Millisecond }
	defer func() { keepAliveEvery = old }()
	v := newAffEnv(t, "")
	ol := newFakeOllama(t)
	v.cfg.Ollama.Host = ol.URL
	e := v.open("serve", "m")
	time.Sleep(30 * time.Millisecond)
	if v.warm.warmed.Load() != 0 || len(ol.seen()) != 0 {
		t.Fatalf("warmed with no affinity: %d warms, %d model requests", v.warm.warmed.Load(), len(ol.seen()))
	}
	affCall(t, e, "tester", "slow-start", 3)
	waitFor(t, func() bool { return v.warm.warmed.Load() >= 3 })
	e.Close()
	loads := 0
	for _, c := range ol.seen() {
		if c.messages == 0 && c.keepAlive == "5m0s" {
			loads++
		}
	}
	if loads < 3 {
		t.Fatalf("%d model loads with keep_alive 5m0s while the affinity was active, want repeated ones", loads)
	}
}

// A state folder the engine cannot use is said at start; the engine runs
// on and writes nothing there.
func TestAffinityUnusableFolder(t *testing.T) {
	v := newAffEnv(t, "")
	if err := os.WriteFile(v.cfg.GuardDir(), []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := v.open("chat", "")
	if n := e.AffinityNotice(); !strings.Contains(n, "affinities are not saved this run") {
		t.Fatalf("notice %q", n)
	}
	affCall(t, e, "tester", "slow-start", 3)
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v (the notice said it already)", err)
	}
	if b, _ := os.ReadFile(v.cfg.GuardDir()); string(b) != "not a folder" {
		t.Fatal("the file in the way was changed")
	}
}
