//go:build e2e && unix

package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// TestNPMEverythingBridges: server-everything's sampling tool, resources
// and prompts through the bridges (the sampler is a fake: the real-Ollama
// path is the engine's ollamaSampler, tested with a fake client).
func TestNPMEverythingBridges(t *testing.T) {
	c, m, _ := npmServer(t, "everything")
	ctx := context.Background()
	f := &fakeSampler{}
	c.SetSampler(f)
	res, err := call(m, ctx, "everything.trigger-sampling-request", `{"prompt":"say hi","maxTokens":5000}`, 0)
	if err != nil || !strings.Contains(string(res.Output), "re: Resource trigger-sampling-request context: say hi") {
		t.Fatalf("sampling: %v %v", err, res)
	}
	if got := f.last(t); got.MaxTokens != DefaultMaxSampleTokens || got.System == "" {
		t.Fatalf("the sampler got %+v (want maxTokens capped at %d)", got, DefaultMaxSampleTokens)
	}

	// Its resources, as the space mcp-everything of list-files and read-file.
	tools, err := builtin.Tools(builtin.Options{Policy: pipeline.AllowAll{},
		Remote: map[string]builtin.RemoteSpace{ResourceSpace("everything"): {Remote: c.Space()}}})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]pipeline.Handler{}
	for _, e := range tools {
		byName[e.Tool.Name] = e.Handler
	}
	out, err := byName["list-files"].Invoke(ctx, []byte(`{"space":"mcp-everything"}`), &pipeline.Call{})
	if err != nil {
		t.Fatal(err)
	}
	var l struct{ Files []struct{ Path, Name string } }
	if err := json.Unmarshal(out, &l); err != nil || len(l.Files) == 0 {
		t.Fatalf("resources: %v %s", err, out)
	}
	for _, p := range []string{l.Files[0].Path, l.Files[0].Name} {
		params, _ := json.Marshal(map[string]string{"space": "mcp-everything", "path": p})
		out, err = byName["read-file"].Invoke(ctx, params, &pipeline.Call{})
		if err != nil || !strings.Contains(string(out), `"text":"`) || !strings.Contains(string(out), l.Files[0].Path) {
			t.Fatalf("read %s: %v %s", p, err, out)
		}
	}

	ps, err := c.Prompts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range ps {
		found = found || p.Name == "simple-prompt"
	}
	if !found {
		t.Fatalf("prompts: %+v", ps)
	}
	if text, err := c.GetPrompt(ctx, "simple-prompt", nil); err != nil || text == "" {
		t.Fatalf("simple-prompt: %v %q", err, text)
	}
}
