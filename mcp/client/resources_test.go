//go:build unix

package client

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

func TestResourcesAsTools(t *testing.T) {
	h := mustStart(t, nil)
	var list, read pipeline.Tool
	for _, tl := range h.conn.Tools() {
		switch tl.Name {
		case "h." + ResourcesListTool:
			list = tl
		case "h." + ResourceReadTool:
			read = tl
		}
	}
	if list.Name == "" || read.Name == "" {
		t.Fatalf("resource tools missing: %v", h.conn.Tools())
	}
	for _, tl := range []pipeline.Tool{list, read} {
		if !tl.ReadOnly || !tl.Idempotent || tl.Destructive {
			t.Fatalf("%s: read-only %v idempotent %v destructive %v", tl.Name, tl.ReadOnly, tl.Idempotent, tl.Destructive)
		}
		want := map[pipeline.Capability]bool{Capability("h"): true, {Kind: "ReadSpace", Arg: "mcp-h"}: true}
		for _, c := range tl.CapabilityRequired {
			delete(want, c)
		}
		if len(want) > 0 {
			t.Fatalf("%s requires %v: missing %v", tl.Name, tl.CapabilityRequired, want)
		}
	}

	res, err := h.call(ResourcesListTool, `{}`, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var l struct{ Resources []struct{ URI, Name string } }
	if err := json.Unmarshal(res.Output, &l); err != nil || len(l.Resources) != 1 || l.Resources[0].URI != "mcptest://greeting" {
		t.Fatalf("list: %v %s", err, res.Output)
	}
	res, err = h.call(ResourceReadTool, `{"uri":"mcptest://greeting"}`, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Contents []struct{ URI, Text string } }
	if err := json.Unmarshal(res.Output, &r); err != nil || len(r.Contents) != 1 || r.Contents[0].Text != "hello from mcptest" {
		t.Fatalf("read: %v %s", err, res.Output)
	}
	// An unknown uri is the server's error, not a crash: the server stays.
	if _, err := h.call(ResourceReadTool, `{"uri":"mcptest://nope"}`, 10*time.Second); pipeline.KindOf(err) != pipeline.KindProviderRejected {
		t.Fatalf("unknown uri: %v", err)
	}
	if _, err := h.call(ResourceReadTool, `{}`, 10*time.Second); pipeline.KindOf(err) != pipeline.KindSchemaValidationFailed {
		t.Fatalf("no uri: %v", err)
	}
	h.echoWorks(t)
}

// TestResourcesNeedTheSpaceGrant: MCP(NAME) alone does not read resources;
// ReadSpace(mcp-NAME) is needed too, as for any space.
func TestResourcesNeedTheSpaceGrant(t *testing.T) {
	h := mustStart(t, nil)
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}, Capabilities: map[string][]pipeline.Capability{
		"both": {Capability("h"), {Kind: "ReadSpace", Arg: "mcp-h"}}, "mcponly": {Capability("h")}}}
	m, err := pipeline.NewManager(pipeline.Config{Registry: h.reg, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	if _, err := m.Call(ctx, pipeline.Request{Tool: "h." + ResourcesListTool, Params: []byte(`{}`), Caller: "both"}); err != nil {
		t.Fatal(err)
	}
	_, err = m.Call(ctx, pipeline.Request{Tool: "h." + ResourcesListTool, Params: []byte(`{}`), Caller: "mcponly"})
	if pipeline.KindOf(err) != pipeline.KindToolCapabilityDenied || !strings.Contains(err.Error(), "ReadSpace(mcp-h)") {
		t.Fatalf("without ReadSpace(mcp-h): %v", err)
	}
}
