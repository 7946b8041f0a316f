//go:build e2e && unix

package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
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

	res, err = call(m, ctx, "everything."+ResourcesListTool, `{}`, 0)
	if err != nil {
		t.Fatal(err)
	}
	var l struct{ Resources []struct{ URI string } }
	if err := json.Unmarshal(res.Output, &l); err != nil || len(l.Resources) == 0 {
		t.Fatalf("resources: %v %s", err, res.Output)
	}
	uri, _ := json.Marshal(map[string]string{"uri": l.Resources[0].URI})
	res, err = call(m, ctx, "everything."+ResourceReadTool, string(uri), 0)
	if err != nil || !strings.Contains(string(res.Output), `"contents"`) {
		t.Fatalf("read %s: %v %v", uri, err, res)
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
