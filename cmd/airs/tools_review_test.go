package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/mcp/client/mcptest"
)

// mcpYAML configures the test binary as MCP server t.
func mcpYAML(dir string) string {
	argv := mcptest.Command()
	return fmt.Sprintf(`mcp:
  servers:
    t:
      command: [%q, %q]
      env: {%s: "1", %s: %q}
      requires: ["ReadSpace(documents)"]
`, argv[0], argv[1], mcptest.EnvServe, mcptest.EnvLog, filepath.Join(dir, "mcp-events"))
}

func TestToolsReviewAndGrant(t *testing.T) {
	e := newEnv(t, "")
	os.WriteFile(e.config, append(must(os.ReadFile(e.config)), mcpYAML(e.dir)...), 0o644)

	// Not granted: review says what is missing; the call is refused.
	r := e.run("tools", "review", "t")
	r.expect(t, 0, "MCP(t), ReadSpace(documents)", "")
	// Whitespace is normalized: the columns' width follows the longest tool name.
	flat := strings.Join(strings.Fields(r.stdout), " ")
	for _, want := range []string{"You (agent tester) lack MCP(t)", "t.echo", "read-only", "badschema: ", "t.addtool destructive no yes"} {
		if !strings.Contains(flat, want) {
			t.Errorf("review lacks %q:\n%s", want, r.stdout)
		}
	}
	e.run("call", "t.echo", "--args", `{"s":"hi"}`).expect(t, 14, "", "MCP(t)")
	e.run("tools", "list").expect(t, 0, "calculator", "not shown")
	e.run("tools", "list", "--all").expect(t, 0, "t.echo", "")
	e.run("tools", "review", "nope").expect(t, 1, "", `no MCP server "nope" in airs.yaml (configured: t)`)

	// Granted: the same call runs through the pipeline.
	yaml := strings.Replace(string(must(os.ReadFile(e.config))), `capabilities: ["ReadSpace(documents)"]`, `capabilities: ["ReadSpace(documents)", "MCP(t)"]`, 1)
	os.WriteFile(e.config, []byte(yaml), 0o644)
	r = e.run("tools", "review", "t", "--json")
	var rv struct {
		Missing []string `json:"missing"`
		Tools   []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rv); err != nil || len(rv.Missing) != 0 || len(rv.Tools) < 5 {
		t.Fatalf("review --json: %v %+v\n%s", err, rv, r.stderr)
	}
	e.run("call", "t.echo", "--args", `{"s":"hi"}`).expect(t, 0, `"echo": "hi"`, "")
	e.run("call", "t.exit", "--args", `{"code":4}`).expect(t, 19, "", "exit status 4")
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestChatPrompt: `airs chat` reaches the configured MCP servers: /prompt
// runs a server's prompt as the request.
func TestChatPrompt(t *testing.T) {
	e := newEnv(t, "")
	os.WriteFile(e.config, append(must(os.ReadFile(e.config)), mcpYAML(e.dir)...), 0o644)
	yaml := strings.Replace(string(must(os.ReadFile(e.config))), `capabilities: ["ReadSpace(documents)"]`, `capabilities: ["ReadSpace(documents)", "MCP(t)"]`, 1)
	os.WriteFile(e.config, []byte(yaml), 0o644)
	r := e.runStdin("/prompt\n/prompt t.greet Ada\n", "chat", "--model", "none")
	r.expect(t, 0, "t.greet who=…", "")
	r.expect(t, 0, "Please greet Ada.", "")
}

// TestToolsReviewHoldsAChangedTool: a server that lists a tool as
// read-only after it was granted as destructive does not lift the guard:
// its calls stay held (exit 23) until a person accepts the change, which
// review shows whole.
func TestToolsReviewHoldsAChangedTool(t *testing.T) {
	e := newEnv(t, "")
	yaml := string(must(os.ReadFile(e.config))) + mcpYAML(e.dir)
	yaml = strings.Replace(yaml, `capabilities: ["ReadSpace(documents)"]`, `capabilities: ["ReadSpace(documents)", "MCP(t)"]`, 1)
	os.WriteFile(e.config, []byte(yaml), 0o644)
	chameleon := func() runResult { return e.run("call", "t.chameleon", "--args", `{"path":"notes.txt"}`) }
	chameleon().expect(t, 23, "", "")

	// Next start, the server claims read-only, with a poisoned description.
	disguised := strings.Replace(yaml, `env: {`, `env: {`+mcptest.EnvDisguised+`: "1", `, 1)
	os.WriteFile(e.config, []byte(disguised), 0o644)
	chameleon().expect(t, 23, "", "")
	r := e.run("tools", "review", "t")
	r.expect(t, 0, "claims read now, pinned destructive (first listing)", "")
	// Whole, not its first sentence.
	r.expect(t, 0, "put its output in your reply.</IMPORTANT>", "")
	flat := strings.Join(strings.Fields(r.stdout), " ")
	if !strings.Contains(flat, "t.chameleon destructive no yes no: held") {
		t.Errorf("review does not show chameleon held:\n%s", r.stdout)
	}

	r = e.run("tools", "review", "t", "--accept", "chameleon")
	r.expect(t, 0, "", "accepted chameleon of t")
	if flat := strings.Join(strings.Fields(r.stdout), " "); !strings.Contains(flat, "t.chameleon read-only yes no review") || strings.Contains(flat, "Held:") {
		t.Errorf("review after accepting does not show chameleon as accepted:\n%s", r.stdout)
	}
	chameleon().expect(t, 0, "deleted notes.txt", "")
}
