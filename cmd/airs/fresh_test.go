package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository, two levels above this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// readmeCommands returns the command lines of README's tour, without their
// trailing comments.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	return readmeBlock(t, "## A short tour", "sh")
}

// readmeBlock returns the lines of the first ```lang block under the README
// heading, without their trailing comments.
func readmeBlock(t *testing.T, heading, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no %q section", heading)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	_, block, ok := strings.Cut(section, "```"+lang+"\n")
	if !ok {
		t.Fatalf("README's %q section has no ```%s block", heading, lang)
	}
	block, _, ok = strings.Cut(block, "\n```")
	if !ok {
		t.Fatalf("README's %q block is not closed", heading)
	}
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	var lines []string
	for l := range strings.SplitSeq(block, "\n") {
		if lang == "sh" {
			l = strings.TrimSpace(comment.ReplaceAllString(l, ""))
		}
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// freshMachine is a machine that has only a clone of the repository: no
// airs.yaml, no AIRS_HOME, no DATA_DIR, no ~/Documents, airs not on PATH.
// The clone holds what README's commands read (chains/examples) and
// bin/airs, the binary under test, as make build leaves it; it sits where
// ../shared/data does not exist.
type freshMachine struct {
	t          *testing.T
	repo, home string
	env        []string
}

func newFreshMachine(t *testing.T) *freshMachine {
	t.Helper()
	dir := t.TempDir()
	m := &freshMachine{t: t, repo: filepath.Join(dir, "clone", "airs"), home: filepath.Join(dir, "home")}
	if err := os.CopyFS(filepath.Join(m.repo, "chains", "examples"), os.DirFS(filepath.Join(repoRoot(t), "chains", "examples"))); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(m.repo, "bin"), 0o755)
	os.MkdirAll(m.home, 0o755)
	if err := os.Symlink(airsBin, filepath.Join(m.repo, "bin", "airs")); err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("README's commands are shell; no bash here")
	}
	// Only the system's directories: an airs installed elsewhere must not
	// stand in for the one README's "export PATH" line puts first.
	m.env = []string{"PATH=" + filepath.Dir(bash) + ":/usr/bin:/bin", "HOME=" + m.home, "LANG=C.UTF-8",
		"TMPDIR=" + filepath.Join(dir, "tmp")}
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	return m
}

// shell runs one README line as a user would after the block's export
// lines (setup), from the clone's root.
func (m *freshMachine) shell(ctx context.Context, setup []string, line string, extraEnv ...string) *exec.Cmd {
	script := strings.Join(append(append([]string{}, setup...), "exec "+line), "\n")
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = m.repo
	cmd.Env = append(append([]string{}, m.env...), extraEnv...)
	cmd.Stdin = strings.NewReader("") // airs chat reads EOF and leaves
	return cmd
}

func execRun(t *testing.T, cmd *exec.Cmd) runResult {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running %v: %v", cmd.Args, err)
	}
	return runResult{out.String(), errb.String(), code}
}

// readmeExpectation is what one README command does on a fresh machine:
// it works (code 0 and its output), or it fails saying what it needs.
type readmeExpectation struct {
	prefix string // the README line starts with this
	code   int
	stdout []string // each must appear
	stderr []string
	used   bool
}

// TestREADMECommands runs every command of README's tour, as
// written and in order, on a fresh machine. A README line this table does
// not know fails the test, so README and the test change together.
func TestREADMECommands(t *testing.T) {
	expect := []*readmeExpectation{
		{prefix: `export PATH="$PWD/bin:$PATH"`},
		// No model configured, Ollama or not: what is configured works; the
		// missing ~/Documents is said.
		{prefix: "airs doctor", stdout: []string{"What is configured works", "space documents", "Documents does not exist"}},
		{prefix: "airs tools list", stdout: []string{"calculator", "pdf-extract", "summarize"}},
		{prefix: "airs call calculator", stdout: []string{`"result": 58.5`}},
		{prefix: "airs chat", stdout: []string{"no-LLM", "bye"}},
		{prefix: "airs demo docs ~/Documents/airs-demo", stdout: []string{"wrote 5 sample PDFs", `space "documents", under airs-demo/`, "--input a=airs-demo/quotes/acme-2024.pdf"}},
		{prefix: "airs run chains/examples/compare-pricing.yaml", stdout: []string{`"label": "Starter plan"`, `"b": "$12"`, `"identical": false`}, stderr: []string{"compare", "ok"}},
		{prefix: "airs run chains/examples/summarize-papers.yaml", stdout: []string{"airs-demo/papers/bm25.pdf", "BM25 ranks documents"}},
		{prefix: "airs task set", stdout: []string{"Task set for", "compare the pricing"}},
		{prefix: "airs recommend", stdout: []string{"pdf-extract", "because space", "airs-demo/", "expires in"}},
		{prefix: "airs serve"}, // run by serveREADME
		{prefix: "airs eval bfcl", code: 2, stderr: []string{"--data is required", "set DATA_DIR", "github.com/ShishirPatil/gorilla", "airs eval bfcl --model none --data evals/bfcl/testdata", "where the data comes from", "github.com/HowieHwong/MetaTool"}},
		{prefix: "airs eval retrieval", code: 2, stderr: []string{"no such file", "set DATA_DIR", "metatool_queries.jsonl.gz", "where the data comes from"}},
		{prefix: "airs eval recommend", code: 2, stderr: []string{"bfcl_multi_turn/base.jsonl.gz", "set DATA_DIR", "evals/recommend/testdata", "where the data comes from"}},
		{prefix: "airs eval replay", code: 2, stderr: []string{"no recorded sessions", "recording is off", "recording: {enabled: true}"}},
		{prefix: "airs grammar bench", code: 1, stderr: []string{"jsonschemabench", "DATA_DIR", "where the data comes from", "github.com/guidance-ai/jsonschemabench"}},
		// The default agent holds no WriteSpace: the capability check refuses
		// before the guard would ask.
		{prefix: "airs call delete-file", code: 14, stderr: []string{"missing capability: WriteSpace(documents)"}},
		{prefix: "airs review", stdout: []string{"nothing to review"}},
		{prefix: "airs audit verify", stdout: []string{"chain intact"}},
		{prefix: "airs help config", stdout: []string{"spaces:", "recording:"}},
		{prefix: "airs help exit-codes", stdout: []string{"tool_capability_denied"}},
		{prefix: "airs --version", stdout: []string{"airs ", "go1."}},
	}
	m := newFreshMachine(t)
	lines := readmeCommands(t)
	var setup []string
	ran := 0
	for _, line := range lines {
		var e *readmeExpectation
		for _, c := range expect {
			if strings.HasPrefix(line, c.prefix) {
				e = c
				break
			}
		}
		if e == nil {
			t.Errorf("README command %q: TestREADMECommands does not know what it should do; add it to the table", line)
			continue
		}
		e.used = true
		if strings.HasPrefix(line, "export ") {
			setup = append(setup, line)
			continue
		}
		if !strings.HasPrefix(line, "airs ") {
			t.Errorf("README command %q: not an airs command", line)
			continue
		}
		ran++
		if strings.HasPrefix(line, "airs serve") {
			serveREADME(t, m, setup, line)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		r := execRun(t, m.shell(ctx, setup, line))
		cancel()
		ok := r.code == e.code
		for _, s := range e.stdout {
			ok = ok && strings.Contains(r.stdout, s)
		}
		for _, s := range e.stderr {
			ok = ok && strings.Contains(r.stderr, s)
		}
		if !ok {
			t.Errorf("README command %q: exit %d (want %d), want stdout with %q and stderr with %q\nstdout:\n%s\nstderr:\n%s",
				line, r.code, e.code, e.stdout, e.stderr, r.stdout, r.stderr)
		}
	}
	for _, c := range expect {
		if !c.used {
			t.Errorf("no README command starts with %q: update the table to README", c.prefix)
		}
	}
	if ran < 10 {
		t.Errorf("ran only %d README commands of %d lines", ran, len(lines))
	}
	// Nothing was written into the clone: state went to the fresh home.
	entries, _ := os.ReadDir(m.repo)
	for _, en := range entries {
		if en.Name() != "bin" && en.Name() != "chains" {
			t.Errorf("README's commands left %s in the repository", en.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(m.home, ".local", "share", "airs", "audit.jsonl")); err != nil {
		t.Errorf("the default AIRS_HOME has no audit log: %v", err)
	}
}

// serveREADME starts README's `airs serve`, waits for it to listen on its
// address, and stops it with Ctrl-C: it must exit 0. When another process
// holds the port (this machine is shared), the failure must name it.
func serveREADME(t *testing.T, m *freshMachine, setup []string, line string) {
	t.Helper()
	busy := false
	if l, err := net.Listen("tcp", "127.0.0.1:7777"); err != nil {
		busy = true
	} else {
		l.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := m.shell(ctx, setup, line)
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	listening := false
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "serving on http://127.0.0.1:7777") {
			listening = true
			break
		}
	}
	if listening {
		// The server logs on; read it so that it never blocks on a full pipe.
		go io.Copy(io.Discard, stderr)
		// Wait until it accepts connections, then Ctrl-C.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if c, err := net.Dial("tcp", "127.0.0.1:7777"); err == nil {
				c.Close()
				break
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
	}
	err := cmd.Wait()
	switch {
	case listening && err != nil:
		t.Errorf("README %q: after Ctrl-C: %v\n%s", line, err, seen.String())
	case !listening && !(busy && strings.Contains(seen.String(), "address already in use")):
		t.Errorf("README %q never served (port busy before: %v): %v\n%s", line, busy, err, seen.String())
	}
}

// The hint of `airs eval bfcl` without data works as written from the
// repository's root, and the README's command runs when DATA_DIR names a
// data folder.
func TestEvalBFCLDefaultData(t *testing.T) {
	root := repoRoot(t)
	run := func(dir string, env []string, args ...string) runResult {
		cmd := exec.Command(airsBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		return execRun(t, cmd)
	}
	r := run(root, []string{"DATA_DIR="}, "eval", "bfcl", "--model", "none", "--data", "evals/bfcl/testdata", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"category":`) != 13 {
		t.Fatalf("the hinted command: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// DATA_DIR/bfcl is the default.
	data := t.TempDir()
	if err := os.Symlink(filepath.Join(root, "evals", "bfcl", "testdata"), filepath.Join(data, "bfcl")); err != nil {
		t.Fatal(err)
	}
	r = run(t.TempDir(), []string{"DATA_DIR=" + data}, "eval", "bfcl", "--model", "none", "--json", "--categories", "multiple")
	if r.code != 0 || !strings.Contains(r.stdout, `{"category":"multiple","n":4`) {
		t.Fatalf("with DATA_DIR: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Without DATA_DIR, ../shared/data/bfcl beside the working directory.
	top := t.TempDir()
	os.MkdirAll(filepath.Join(top, "shared", "data"), 0o755)
	os.MkdirAll(filepath.Join(top, "repo"), 0o755)
	os.Symlink(filepath.Join(root, "evals", "bfcl", "testdata"), filepath.Join(top, "shared", "data", "bfcl"))
	r = run(filepath.Join(top, "repo"), []string{"DATA_DIR="}, "eval", "bfcl", "--model", "none", "--json", "--categories", "irrelevance")
	if r.code != 0 || !strings.Contains(r.stdout, `{"category":"irrelevance","n":4`) {
		t.Fatalf("with ../shared/data: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// A bad flag is still reported as such, before the missing data.
	r = run(t.TempDir(), []string{"DATA_DIR="}, "eval", "bfcl", "--bogus")
	r.expect(t, 2, "", "flag provided but not defined: -bogus")
	if strings.Contains(r.stderr, "--data is required") {
		t.Errorf("a bad flag was reported as missing data:\n%s", r.stderr)
	}
}

func TestTimeoutRange(t *testing.T) {
	e := newEnv(t, "")
	pipe := filepath.Join(e.dir, "p.yaml")
	os.WriteFile(pipe, []byte("pipeline: p\nsteps:\n  - id: a\n    tool: calculator\n    params: {expression: \"1+1\"}\noutput: \"{{steps.a.output.result}}\"\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "0"}, 2},
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "-1s"}, 2},
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "600001ms"}, 2},
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "20m"}, 2},
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "600s"}, 0},
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`, "--timeout", "1ns"}, -1}, // in range: not a usage error (the call itself may time out)
		{[]string{"call", "calculator", "--args", `{"expression":"1"}`}, 0},
		{[]string{"run", pipe, "--timeout", "0s"}, 2},
		{[]string{"run", pipe, "--timeout", "11m"}, 2},
		{[]string{"run", pipe, "--timeout", "30s"}, 0},
	} {
		r := e.run(c.args...)
		switch {
		case c.code == 2 && (r.code != 2 || !strings.Contains(r.stderr, "is out of range: give a duration in (0, 600s]")):
			t.Errorf("airs %q: exit %d, want 2 naming the range; stderr:\n%s", c.args, r.code, r.stderr)
		case c.code == 0 && r.code != 0:
			t.Errorf("airs %q: exit %d; stderr:\n%s", c.args, r.code, r.stderr)
		case c.code == -1 && (r.code == 2 || strings.Contains(r.stderr, "out of range")):
			t.Errorf("airs %q: an in-range timeout was refused:\n%s", c.args, r.stderr)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	e := newEnv(t, "")
	a, b := e.run("--version"), e.run("version")
	a.expect(t, 0, "airs ", "")
	if a.stdout != b.stdout {
		t.Errorf("airs --version %q, airs version %q", a.stdout, b.stdout)
	}
	e.run("--version", "extra").expect(t, 2, "", "takes no arguments")
	e.run("--help").expect(t, 0, "--version", "")
}

// A bad flag is one line naming it and one line of hint: not twice, not
// followed by the whole usage, for every command and subcommand.
func TestUnknownFlagOnce(t *testing.T) {
	e := newEnv(t, "")
	for _, args := range [][]string{
		{"--bogus"},
		{"tools", "list", "--bogus"},
		{"call", "calculator", "--bogus"},
		{"run", "x.yaml", "--bogus"},
		{"serve", "--bogus"},
		{"chat", "--bogus"},
		{"audit", "verify", "--bogus"},
		{"version", "--bogus"},
		{"demo", "docs", "--bogus"},
		{"eval", "bfcl", "--bogus"},
		{"eval", "retrieval", "--bogus"},
		{"eval", "replay", "--bogus"},
		{"eval", "tune", "--bogus"},
		{"grammar", "bench", "--bogus", "x"},
		{"grammar", "compile", "--bogus", "x"},
		{"grammar", "suite", "--bogus", "x"},
	} {
		r := e.run(args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || r.stdout != "" || len(lines) != 2 || strings.Count(r.stderr, "bogus") != 1 ||
			!strings.HasPrefix(lines[1], "Run 'airs ") || !strings.Contains(lines[1], "--help") {
			t.Errorf("airs %q: exit %d, stdout %d bytes, stderr:\n%s", args, r.code, len(r.stdout), r.stderr)
		}
	}
	// --help still prints the command's usage with its flags.
	e.run("call", "--help").expect(t, 0, "-timeout duration", "")
	e.run("eval", "bfcl", "--help").expect(t, 0, "-categories", "")
	e.run("eval", "retrieval", "--help").expect(t, 0, "-embedder", "")
}

// airs demo docs names the space that holds the folder and prints commands
// that work; a folder in no space says how to add one.
func TestDemoDocs(t *testing.T) {
	e := newEnv(t, "")
	// A folder name with a space and a quote: the printed commands quote it.
	r := e.run("demo", "docs", filepath.Join(e.docs, "Bob's samples"))
	r.expect(t, 0, `space "documents", under Bob's samples/`, "")
	for _, f := range []string{"quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "papers/attention.pdf", "papers/bm25.pdf", "papers/grammars.pdf"} {
		if st, err := os.Stat(filepath.Join(e.docs, "Bob's samples", f)); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// The printed commands run as printed (from the repository's root).
	ran := 0
	for l := range strings.SplitSeq(r.stdout, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "airs run ") && !strings.HasPrefix(l, "airs call ") {
			continue
		}
		ran++
		cmd := exec.Command("bash", "-c", "exec "+strings.Replace(l, "airs", airsBin, 1)+" --config "+e.config)
		cmd.Dir = repoRoot(t)
		cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
		if res := execRun(t, cmd); res.code != 0 {
			t.Errorf("%s: exit %d\n%s", l, res.code, res.stderr)
		}
	}
	if ran != 3 {
		t.Errorf("printed %d airs run and call commands, want 3:\n%s", ran, r.stdout)
	}
	// A space other than documents is named with --input space=.
	e.run("demo", "docs", filepath.Join(e.dir, "private", "d")).expect(t, 0, "--input space=private --input a=d/quotes/acme-2024.pdf", "")
	// A folder in no space: said, with the fix.
	e.run("demo", "docs", filepath.Join(e.dir, "elsewhere")).expect(t, 0, "is in no space of this configuration", "")
	e.run("demo").expect(t, 2, "", "docs DIR")
}

// A pipeline whose space input names no configured space fails before
// anything runs, saying how to get documents.
func TestRunMissingSpace(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(airsBin, "run", filepath.Join(repoRoot(t), "chains", "examples", "compare-pricing.yaml"), "--input", "a=x.pdf", "--input", "b=y.pdf")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AIRS_HOME="+filepath.Join(dir, "state"), "AIRS_CONFIG=", "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, "cfg"))
	r := execRun(t, cmd)
	r.expect(t, 1, "", `the pipeline reads the space "documents", which is not configured (spaces: cwd = `)
	if !strings.Contains(r.stderr, "airs demo docs ~/Documents/airs-demo") || strings.Contains(r.stderr, "pdf-extract") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	// Nothing ran, so nothing was audited.
	if _, err := os.Stat(filepath.Join(dir, "state", "audit.jsonl")); err == nil {
		data, _ := os.ReadFile(filepath.Join(dir, "state", "audit.jsonl"))
		if len(bytes.TrimSpace(data)) > 0 {
			t.Errorf("a step ran:\n%s", data)
		}
	}
}

// make demo prints that it builds before the build starts, runs in a temp
// folder it names and keeps, and never touches the user's AIRS_HOME or
// airs.yaml. It runs on a copy of the Makefile and scripts with a stand-in
// for go that copies the binary under test (and takes its time).
func TestMakeDemo(t *testing.T) {
	makeBin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("no make on this machine")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	for _, sub := range []string{"scripts", "chains/examples"} {
		if err := os.CopyFS(filepath.Join(repo, sub), os.DirFS(filepath.Join(root, sub))); err != nil {
			t.Fatal(err)
		}
	}
	mk, _ := os.ReadFile(filepath.Join(root, "Makefile"))
	os.WriteFile(filepath.Join(repo, "Makefile"), mk, 0o644)
	fakeGo := filepath.Join(dir, "fakego")
	// go list -deps PKG: the packages, after a module download; go build
	// -v -o OUT PKG: the packages it compiled, and the binary.
	os.WriteFile(fakeGo, []byte(`#!/bin/sh
case "$1" in
list) echo "go: downloading example.com/fake-module v1.0.0" >&2; printf 'fmt\nexample.com/a\nexample.com/b\n' ;;
build) shift; while [ "$1" != "-o" ]; do shift; done
	sleep 0.3; echo example.com/a >&2; echo example.com/b >&2
	mkdir -p "$(dirname "$2")"; cp "`+airsBin+`" "$2" ;;
*) exit 2 ;;
esac
`), 0o755)
	userHome := filepath.Join(dir, "user-airs-home")
	userConfig := filepath.Join(dir, "user-airs.yaml")
	os.WriteFile(userConfig, []byte("this is: [not valid yaml for airs\n"), 0o644)
	tmp := filepath.Join(dir, "tmp")
	os.MkdirAll(tmp, 0o755)
	cmd := exec.Command(makeBin, "-s", "demo", "GO="+fakeGo)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "AIRS_HOME="+userHome, "AIRS_CONFIG="+userConfig, "TMPDIR="+tmp, "HOME="+dir, "AIRS_BIN=")
	// One stream, as a terminal shows it, so that the order can be read.
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	if err := cmd.Run(); err != nil {
		t.Fatalf("make demo: %v\n%s", err, both.String())
	}
	r := runResult{stdout: both.String()}
	b, g, d := strings.Index(r.stdout, "building ./bin/airs"), strings.Index(r.stdout, "go: downloading example.com/fake-module"),
		strings.Index(r.stdout, "built bin/airs in ")
	if b < 0 || g < 0 || d < 0 || b > g || g > d || !strings.Contains(r.stdout, "(2 packages compiled, the rest from the build cache)") {
		t.Errorf("want 'building ./bin/airs' before the build starts, its module downloads, then what it compiled (at %d, %d, %d):\n%s", b, g, d, r.stdout)
	}
	// The commands it shows can be pasted: arguments with spaces or quotes
	// are quoted.
	if !strings.Contains(r.stdout, `$ airs call calculator --args '{"expression":"(12.5 + 7) * 3"}'`) {
		t.Errorf("the calculator call is not shown as it can be pasted:\n%s", r.stdout)
	}
	for _, s := range []string{"chain intact", `"label": "Starter plan"`, "papers/bm25.pdf", "path_escape"} {
		if !strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("make demo output lacks %q", s)
		}
	}
	if _, err := os.Stat(userHome); !os.IsNotExist(err) {
		t.Errorf("make demo touched the user's AIRS_HOME %s: %v", userHome, err)
	}
	// It names its folder, and the folder holds what it says.
	m := regexp.MustCompile(`demo folder: (\S+)`).FindStringSubmatch(r.stdout)
	if m == nil || !strings.HasPrefix(m[1], tmp) || !strings.Contains(r.stdout, "rm -rf "+m[1]) {
		t.Fatalf("make demo does not name its folder under TMPDIR:\n%s", r.stdout)
	}
	for _, f := range []string{"documents/quotes/acme-2024.pdf", "documents/papers/bm25.pdf", "airs.yaml", "state/audit.jsonl", "state/sessions/sessions.jsonl"} {
		if _, err := os.Stat(filepath.Join(m[1], f)); err != nil {
			t.Errorf("the demo folder lacks %s: %v", f, err)
		}
	}
}

// README's quick start with no model runs as written on a fresh machine
// (with airs on PATH, as the install line leaves it), in the no-LLM mode.
func TestREADMENoModelQuickStart(t *testing.T) {
	m := newFreshMachine(t)
	setup := []string{`export PATH="$PWD/bin:$PATH"`}
	want := map[string][]string{
		"airs chat":            {"no-LLM", "bye"},
		"airs call calculator": {`"result": 58.5`},
		"airs select":          {"tool: list-files", `"pattern":"*.pdf"`, `"space":"cwd"`},
	}
	lines := readmeBlock(t, "## Quick start with no model", "sh")
	for _, line := range lines {
		var expect []string
		for p, w := range want {
			if strings.HasPrefix(line, p) {
				expect = w
				delete(want, p)
			}
		}
		if expect == nil {
			t.Errorf("README quick start line %q: this test does not know what it should do", line)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		r := execRun(t, m.shell(ctx, setup, line))
		cancel()
		ok := r.code == 0
		for _, s := range expect {
			ok = ok && strings.Contains(r.stdout, s)
		}
		if !ok {
			t.Errorf("README %q: exit %d, want stdout with %q\nstdout:\n%s\nstderr:\n%s", line, r.code, expect, r.stdout, r.stderr)
		}
	}
	for p := range want {
		t.Errorf("README's quick start with no model lost %q", p)
	}
}

// README's minimal airs.yaml is valid, and means what the README says.
func TestREADMEConfig(t *testing.T) {
	m := newFreshMachine(t)
	yaml := strings.Join(readmeBlock(t, "## A minimal `airs.yaml`", "yaml"), "\n") + "\n"
	for _, d := range []string{"Documents", "src"} {
		os.MkdirAll(filepath.Join(m.home, d), 0o755)
	}
	file := filepath.Join(m.home, "airs.yaml")
	os.WriteFile(file, []byte(yaml), 0o644)
	cmd := exec.Command(airsBin, "--config", file, "doctor", "--json")
	cmd.Env = append(m.env, "OLLAMA_HOST=127.0.0.1:1") // nothing listens there
	r := execRun(t, cmd)
	// The model it names is not there: doctor says so (exit 1) after the
	// file was read as valid, with both spaces.
	for _, s := range []string{`"status": "ok"`, "is valid", `"name": "space documents"`, `"name": "space projects"`, "ollama pull qwen3:4b"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("airs doctor on README's airs.yaml lacks %q: exit %d\n%s\n%s", s, r.code, r.stdout, r.stderr)
		}
	}
	if r.code != 1 {
		t.Errorf("doctor with a configured model and no Ollama: exit %d, want 1", r.code)
	}
}
