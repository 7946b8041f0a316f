package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/airs-dev/airs/mcp/client/mcptest"
)

// airsBin is the binary under test, built once by TestMain.
var airsBin string

func TestMain(m *testing.M) {
	mcptest.MaybeServe() // the test binary is also the MCP test server
	dir, err := os.MkdirTemp("", "airs-bin-")
	if err != nil {
		panic(err)
	}
	airsBin = filepath.Join(dir, "airs")
	if runtime.GOOS == "windows" {
		airsBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", airsBin, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building airs: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one isolated airs installation: a config file, a state dir, a
// documents space with real files.
type env struct {
	t      *testing.T
	dir    string
	config string
	home   string
	docs   string
}

func newEnv(t *testing.T, extraYAML string) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, config: filepath.Join(dir, "airs.yaml"), home: filepath.Join(dir, "state"), docs: filepath.Join(dir, "docs")}
	os.MkdirAll(filepath.Join(e.docs, "papers"), 0o755)
	os.MkdirAll(filepath.Join(dir, "private"), 0o755)
	os.WriteFile(filepath.Join(e.docs, "hello.txt"), []byte("hello from the docs space\n"), 0o644)
	os.WriteFile(filepath.Join(e.docs, "papers", "a.pdf"), []byte("%PDF-1.4"), 0o644)
	os.WriteFile(filepath.Join(dir, "private", "secret.txt"), []byte("secret"), 0o644)
	yaml := `
spaces:
  documents: ./docs
  private: ./private
agents:
  tester:
    capabilities: ["ReadSpace(documents)"]
cli:
  users:
    "*": tester
` + extraYAML
	if err := os.WriteFile(e.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

type runResult struct {
	stdout, stderr string
	code           int
}

// run runs the binary with --config and a private AIRS_HOME.
func (e *env) run(args ...string) runResult {
	e.t.Helper()
	return e.runStdin("", args...)
}

func (e *env) runStdin(stdin string, args ...string) runResult {
	e.t.Helper()
	cmd := exec.Command(airsBin, append([]string{"--config", e.config}, args...)...)
	cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running airs %v: %v", args, err)
	}
	return runResult{out.String(), errb.String(), code}
}

func (r runResult) expect(t *testing.T, code int, stdoutHas, stderrHas string) {
	t.Helper()
	if r.code != code || !strings.Contains(r.stdout, stdoutHas) || !strings.Contains(r.stderr, stderrHas) {
		t.Fatalf("exit %d (want %d), stdout has %q? stderr has %q?\nstdout:\n%s\nstderr:\n%s", r.code, code, stdoutHas, stderrHas, r.stdout, r.stderr)
	}
}

func TestToolsList(t *testing.T) {
	e := newEnv(t, "")
	r := e.run("tools", "list")
	r.expect(t, 0, "calculator", "")
	for _, name := range []string{"compare", "list-files", "pdf-extract", "read-file", "summarize"} {
		if !strings.Contains(r.stdout, name) {
			t.Errorf("tools list lacks %s:\n%s", name, r.stdout)
		}
	}
	r = e.run("tools", "list", "--json")
	var tools []struct {
		Name     string `json:"name"`
		Provider string `json:"provider"`
		Trust    int    `json:"trust"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &tools); err != nil || len(tools) != 6 || tools[0].Provider != "builtin" || tools[0].Trust != 3 {
		t.Fatalf("tools list --json: %v %+v", err, tools)
	}
	e.run("tools", "show", "list-files").expect(t, 0, `"enum": [`, "")
	e.run("tools", "show", "calculator").expect(t, 0, `airs call calculator --args '{"expression": "…"}'`, "")
	e.run("tools", "show", "nope").expect(t, 10, "", "hint: check the name")
	e.run("tools").expect(t, 2, "", "say 'list', 'show NAME' or 'review SERVER'")
}

func TestCallAndAudit(t *testing.T) {
	e := newEnv(t, "")
	r := e.run("call", "calculator", "--args", `{"expression": "(12.5 + 7) * 3"}`)
	r.expect(t, 0, `"result": 58.5`, "")

	// Flags before the name work too, and --args from stdin and @file.
	e.run("call", "--args", `{"expression": "2^10"}`, "calculator").expect(t, 0, `"result": 1024`, "")
	e.runStdin(`{"expression": "sqrt(81)"}`, "call", "calculator", "--args", "-").expect(t, 0, `"result": 9`, "")
	pf := filepath.Join(e.dir, "p.json")
	os.WriteFile(pf, []byte(`{"space": "documents", "path": "hello.txt"}`), 0o644)
	e.run("call", "read-file", "--args", "@"+pf).expect(t, 0, "hello from the docs space", "")
	e.run("call", "list-files", "--args", `{"space": "documents", "pattern": "*.pdf", "recursive": true}`).expect(t, 0, `"path": "papers/a.pdf"`, "")

	// --json prints the whole result.
	r = e.run("call", "calculator", "--args", `{"expression": "1+1"}`, "--json")
	var res struct {
		CallID   string          `json:"call_id"`
		Outcome  string          `json:"outcome"`
		Provider string          `json:"provider"`
		Output   json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Outcome != "ok" || res.Provider != "builtin" || res.CallID == "" {
		t.Fatalf("--json: %v %s", err, r.stdout)
	}

	// Each failure has its own exit code and a hint.
	for _, c := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"call", "calculator", "--args", `{"expression": "1/0"}`}, 20, "division_by_zero"},
		{[]string{"call", "calculator", "--args", `{"expression": 42}`}, 15, "/expression"},
		{[]string{"call", "calculator", "--args", `{"expr": "1"}`}, 15, "hint: fix the listed params"},
		{[]string{"call", "no-such-tool"}, 10, "hint: check the name with `airs tools list`"},
		{[]string{"call", "read-file", "--args", `{"space": "private", "path": "secret.txt"}`}, 14, "ReadSpace(private)"},
		{[]string{"call", "read-file", "--args", `{"space": "documents", "path": "../private/secret.txt"}`}, 20, "path_escape"},
		{[]string{"call", "calculator", "--provider", "elsewhere", "--args", `{"expression": "1"}`}, 10, "tool not found: calculator (provider elsewhere); it is offered by builtin"},
		{[]string{"call", "calculator", "--provider", "builtin", "--args", `{"expression": "1"}`}, 0, ""},
		{[]string{"call", "calculator", "--args", `{bad json`}, 2, "not valid JSON"},
		{[]string{"call", "calculator", "--args", `{"expression": "1", "expression": "2"}`}, 2, `--args: duplicate key "expression"`},
		{[]string{"call", "calculator", "--args", `{"expression": "1"} {"expression": "2"}`}, 2, "--args: trailing data"},
		{[]string{"call", "calculator", "--args", `[1]`}, 2, "must be a JSON object"},
		{[]string{"call"}, 2, "exactly one tool NAME"},
		{[]string{"call", "calculator", "--timeout", "soon"}, 2, "invalid value"},
	} {
		r := e.run(c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.stderr) {
			t.Errorf("airs %q: exit %d (want %d), stderr:\n%s", c.args, r.code, c.code, r.stderr)
		}
		if c.code == 14 && strings.Contains(r.stdout, "secret") {
			t.Errorf("denied call printed the secret")
		}
	}

	// The audit log has every call that reached the Manager, and verifies.
	r = e.run("audit", "verify")
	r.expect(t, 0, "chain intact", "")
	if !strings.Contains(r.stdout, "14 records") {
		t.Errorf("audit verify: %s", r.stdout)
	}
	r = e.run("audit", "tail", "-n", "3", "--json")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 3 {
		t.Fatalf("audit tail: %d %q", r.code, r.stdout)
	}
	var last struct {
		Caller, Tool, Outcome, Error string
		ParamsSHA256                 string `json:"params_sha256"`
	}
	json.Unmarshal([]byte(lines[2]), &last)
	if last.Caller != "tester" || last.Tool != "calculator" || last.Outcome != "ok" || len(last.ParamsSHA256) != 64 {
		t.Errorf("last record: %+v", last)
	}
	e.run("audit", "tail").expect(t, 0, "tool_capability_denied", "")

	// Tampering breaks the chain: exit 4, and the line is named.
	logPath := filepath.Join(e.home, "audit.jsonl")
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	tampered := bytes.Replace(data, []byte(`"caller":"tester"`), []byte(`"caller":"nobody"`), 1)
	if bytes.Equal(tampered, data) {
		t.Fatal("nothing to tamper with")
	}
	os.WriteFile(logPath, tampered, 0o600)
	e.run("audit", "verify").expect(t, 4, "BROKEN", "audit chain is broken at line 2")
}

func TestAuditVerifyBeforeAnyCall(t *testing.T) {
	e := newEnv(t, "")
	e.run("audit", "verify").expect(t, 0, "no audit log yet", "")
}

func TestInvalidConfig(t *testing.T) {
	e := newEnv(t, "breaker:\n  failures: lots\nspacez: 1\n")
	r := e.run("tools", "list")
	r.expect(t, 3, "", "airs.yaml:12: wrong type: `lots` is a string, want a whole number")
	if !strings.Contains(r.stderr, `airs.yaml:13: unknown key "spacez"`) || !strings.Contains(r.stderr, "airs help config") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	missing := newEnv(t, "")
	missing.config = filepath.Join(missing.dir, "nope.yaml")
	missing.run("tools", "list").expect(t, 3, "", "does not exist")
}

func TestHelp(t *testing.T) {
	e := newEnv(t, "")
	e.run().expect(t, 2, "Usage:", "")
	e.run("--help").expect(t, 0, "airs call calculator", "")
	e.run("help", "call").expect(t, 0, "Examples:", "")
	e.run("call", "--help").expect(t, 0, "-timeout duration", "")
	e.run("help", "tools").expect(t, 0, "airs tools show calculator", "")
	e.run("help", "audit").expect(t, 0, "airs audit verify", "")
	e.run("help", "config").expect(t, 0, "spaces:", "")
	e.run("help", "exit-codes").expect(t, 0, "14    tool_capability_denied", "")
	e.run("help", "nope").expect(t, 2, "", "no help for")
	e.run("tolls", "list").expect(t, 2, "", `did you mean "tools"`)
	e.run("version").expect(t, 0, "airs ", "")
}

// With no config file at all, airs works: the cwd space, the local agent.
func TestNoConfigFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("no config needed\n"), 0o644)
	cmd := exec.Command(airsBin, "call", "read-file", "--args", `{"space": "cwd", "path": "notes.txt"}`)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AIRS_HOME="+filepath.Join(dir, "state"), "AIRS_CONFIG=", "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no config needed") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// Concurrent `airs call` processes share the audit log (each batch is
// chained under the file lock): every call is recorded, the chain holds.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, "")
	const n = 6
	codes := make(chan int, n)
	for i := range n {
		go func() {
			cmd := exec.Command(airsBin, "--config", e.config, "call", "calculator", "--args", `{"expression": "`+strings.Repeat("1+", i)+`1"}`)
			cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
			err := cmd.Run()
			var ee *exec.ExitError
			switch {
			case err == nil:
				codes <- 0
			case errors.As(err, &ee):
				codes <- ee.ExitCode()
			default:
				codes <- -1
			}
		}()
	}
	for range n {
		if c := <-codes; c != 0 {
			t.Errorf("a concurrent call exited %d", c)
		}
	}
	e.run("audit", "verify").expect(t, 0, "6 records, chain intact", "")
}

// TestToolsShowWhatCallerMayCall: tools list/show present a tool as the
// caller may call it — the space enum narrowed to the spaces it reads —
// and --all as registered.
func TestToolsShowWhatCallerMayCall(t *testing.T) {
	e := newEnv(t, "")
	enum := func(args ...string) []string {
		t.Helper()
		r := e.run(append([]string{"tools", "show", "list-files", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("tools show %v: exit %d: %s", args, r.code, r.stderr)
		}
		var tool struct {
			Parameters struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"parameters"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &tool); err != nil {
			t.Fatalf("%v: %s", err, r.stdout)
		}
		return tool.Parameters.Properties["space"].Enum
	}
	if got := enum(); !slices.Equal(got, []string{"documents"}) {
		t.Errorf("space enum as the caller sees it = %v, want [documents]", got)
	}
	if got := enum("--all"); !slices.Contains(got, "private") {
		t.Errorf("--all space enum = %v, want it to list private", got)
	}
	if r := e.run("tools", "show", "list-files"); strings.Contains(r.stdout, "private") {
		t.Errorf("tools show names a space the caller cannot read:\n%s", r.stdout)
	}
}
