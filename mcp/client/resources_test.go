//go:build unix

package client

import (
	"context"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// TestResources: the server's resources, listed and read through the
// Conn (internal/engine makes them the space mcp-NAME); no tools of
// AIRS's making appear beside the server's.
func TestResources(t *testing.T) {
	h := mustStart(t, nil)
	for _, tl := range h.conn.Tools() {
		if strings.Contains(tl.Name, "resource") {
			t.Fatalf("a resource tool is registered: %s", tl.Name)
		}
	}
	ctx := context.Background()
	if !h.conn.HasResources(ctx) {
		t.Fatal("mcptest declares resources")
	}
	list, err := h.conn.Resources(ctx)
	if err != nil || len(list) != 1 || list[0].URI != "mcptest://greeting" || list[0].Name != "greeting" {
		t.Fatalf("list: %v %v", list, err)
	}
	cs, err := h.conn.ReadResource(ctx, "mcptest://greeting")
	if err != nil || len(cs) != 1 || cs[0].Text != "hello from mcptest" {
		t.Fatalf("read: %v %v", cs, err)
	}
	// An unknown uri is the server's error, not a crash: the server stays.
	if _, err := h.conn.ReadResource(ctx, "mcptest://nope"); pipeline.KindOf(err) != pipeline.KindProviderRejected {
		t.Fatalf("unknown uri: %v", err)
	}
	h.echoWorks(t)
}
