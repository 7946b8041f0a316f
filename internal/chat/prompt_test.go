//go:build unix

package chat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// The test binary is also the MCP test server (mcptest).
func TestMain(m *testing.M) {
	mcptest.MaybeServe()
	os.Exit(m.Run())
}

// TestPromptCommand: /prompt lists and runs a real stdio server's prompt,
// and the prompt's text is the turn's request; a caller without MCP(t)
// sees none of it.
func TestPromptCommand(t *testing.T) {
	var m *engine.MCP
	argv := mcptest.Command()
	yaml := fmt.Sprintf("mcp:\n  servers:\n    t:\n      command: [%q, %q]\n      env: {%s: \"1\"}\n", argv[0], argv[1], mcptest.EnvServe)
	path := filepath.Join(t.TempDir(), "airs.yaml")
	must(t, os.WriteFile(path, []byte(yaml), 0o644))
	cfg, err := config.Parse(path, []byte(yaml))
	must(t, err)
	r := newRigWith(t, "none", nil, func(reg *pipeline.Registry, o *engine.Options) {
		m = engine.StartMCP(context.Background(), cfg, reg, nil, "test")
		o.MCP = m
	})
	t.Cleanup(func() { m.Close() })
	if len(m.Problems()) > 0 {
		t.Fatal(m.Problems())
	}
	orig := r.eng.Catalog().Policy

	r.start(Options{})
	mark := r.expect(0, "> ")
	r.say("/prompt")
	mark = r.expect(mark, "no MCP server you may use offers prompts")
	r.say("/prompt t.greet Ada")
	mark = r.expect(mark, "no prompt t.greet")

	r.eng.Catalog().Policy = &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"tester": {{Kind: "ReadSpace", Arg: "documents"}, client.Capability("t")}}}
	defer func() { r.eng.Catalog().Policy = orig }()
	r.say("/prompt")
	mark = r.expect(mark, "t.greet who=…  Ask to greet someone.")
	r.say("/prompt t.greet")
	mark = r.expect(mark, "who is required")
	r.say(`/prompt greet who="Ada Lovelace"`)
	mark = r.expect(mark, "Please greet Ada Lovelace.")
	r.expect(mark, "> ")
	r.stop()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		for _, rec := range r.sessions() {
			if rec.Request == "Please greet Ada Lovelace." {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatalf("no turn recorded with the prompt's text as its request: %+v", r.sessions())
		}
	}
}

func TestPromptArgs(t *testing.T) {
	one := engine.ServerPrompt{Server: "s", Prompt: client.Prompt{Name: "p", Arguments: []client.PromptArgument{{Name: "who", Required: true}}}}
	two := engine.ServerPrompt{Server: "s", Prompt: client.Prompt{Name: "q", Arguments: []client.PromptArgument{{Name: "a"}, {Name: "b"}}}}
	cases := []struct {
		p    engine.ServerPrompt
		in   string
		want map[string]string
		bad  bool
	}{
		{one, "Ada Lovelace", map[string]string{"who": "Ada Lovelace"}, false},
		{one, "", map[string]string{}, false},
		{two, `a=1 b="x y"`, map[string]string{"a": "1", "b": "x y"}, false},
		{two, `b="x y" a=2`, map[string]string{"a": "2", "b": "x y"}, false},
		{two, "just text", nil, true},
		{two, `a="open`, nil, true},
	}
	for _, c := range cases {
		got, err := promptArgs(c.p, c.in)
		if (err != nil) != c.bad || (!c.bad && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("promptArgs(%s, %q) = %v, %v; want %v (error %v)", c.p.Name, c.in, got, err, c.want, c.bad)
		}
	}
}
