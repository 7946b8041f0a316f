//go:build unix

package client

import (
	"context"
	"strings"
	"testing"
)

func TestPrompts(t *testing.T) {
	h := mustStart(t, nil)
	ctx := context.Background()
	ps, err := h.conn.Prompts(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "greet" || len(ps[0].Arguments) != 1 || !ps[0].Arguments[0].Required {
		t.Fatalf("prompts: %v %+v", err, ps)
	}
	text, err := h.conn.GetPrompt(ctx, "greet", map[string]string{"who": "Ada"})
	if err != nil || text != "Please greet Ada." {
		t.Fatalf("get: %v %q", err, text)
	}
	if _, err := h.conn.GetPrompt(ctx, "greet", nil); err == nil || !strings.Contains(err.Error(), "who is required") {
		t.Fatalf("missing argument: %v", err)
	}
	if _, err := h.conn.GetPrompt(ctx, "nope", nil); err == nil || !strings.Contains(err.Error(), "prompt nope") {
		t.Fatalf("unknown prompt: %v", err)
	}
	h.echoWorks(t)
}
