package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// chatBin is airs built with -tags airs_chattest: the binary plus a test
// tool, slow, that runs until it is cancelled (chat_testtools.go).
var (
	chatBinOnce sync.Once
	chatBin     string
	chatBinErr  error
)

func buildChatBin(t *testing.T) string {
	t.Helper()
	chatBinOnce.Do(func() {
		chatBin = filepath.Join(filepath.Dir(airsBin), "airs-chattest") // removed by TestMain
		out, err := exec.Command("go", "build", "-tags", "airs_chattest", "-o", chatBin, ".").CombinedOutput()
		if err != nil {
			chatBinErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if chatBinErr != nil {
		t.Fatalf("building airs with the chat test tools: %v", chatBinErr)
	}
	return chatBin
}

// chatManifest declares delete-note: a destructive tool, bound
// to the builtin read-file handler. The test only checks that AIRS asks
// before running it and that a declined call never reaches the pipeline
// (the audit log has every call that did).
const chatManifest = `provider: notes
tools:
  - name: delete-note
    version: 1.0.0
    description: Delete a note file from the notes folder permanently (remove, erase the note).
    handler: builtin.read-file
    parameters:
      type: object
      properties:
        space: {type: string, enum: [documents]}
        path: {type: string}
      required: [space, path]
      additionalProperties: false
    capability_required: ["ReadSpace(documents)"]
    trust: TL2
    latency_class: instant
    idempotent: false
    destructive: true
`

// term is airs chat on a pseudo-terminal.
type term struct {
	t    *testing.T
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  []byte
	mark int
	done chan struct{}
}

func startChat(t *testing.T, e *env, args ...string) *term {
	t.Helper()
	bin := buildChatBin(t)
	cmd := exec.Command(bin, append([]string{"--config", e.config, "chat"}, args...)...)
	cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, pty: f, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		buf := make([]byte, 4096)
		for {
			n, err := f.Read(buf)
			tm.mu.Lock()
			tm.out = append(tm.out, buf[:n]...)
			tm.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		f.Close()
	})
	return tm
}

func (tm *term) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return string(tm.out)
}

// expect waits for s in the output after what earlier expects consumed.
func (tm *term) expect(s string) {
	tm.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := tm.output()
		if i := strings.Index(out[tm.mark:], s); i >= 0 {
			tm.mark += i + len(s)
			return
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the terminal never showed %q; since the last match it shows:\n%s", s, out[tm.mark:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// typ types keys (a line ends with \r, as the Enter key sends).
func (tm *term) typ(keys string) {
	tm.t.Helper()
	if _, err := io.WriteString(tm.pty, keys); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

func TestChatOnATerminal(t *testing.T) {
	e := newEnv(t, "manifests: [./chat-tools.yaml]\nrecording:\n  enabled: true\n")
	if err := os.WriteFile(filepath.Join(e.dir, "chat-tools.yaml"), []byte(chatManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(e.docs, "todo.txt"), []byte("buy milk\n"), 0o644)

	tm := startChat(t, e, "--model", "none")
	tm.expect("AIRS chat as tester — mode: no-LLM")
	tm.expect("no-LLM mode: no model reachable")
	tm.expect("> ")

	// A request: the tool call is shown, then its result.
	tm.typ("calculate (12.5 + 7) * 3\r")
	tm.expect(`[no-LLM mode] tool: calculator {"expression":"(12.5 + 7) * 3"}`)
	tm.expect("(12.5 + 7) * 3 = 58.5")
	tm.expect("> ")

	// /why explains the choice.
	tm.typ("/why\r")
	tm.expect("score  semantic  cosine  coverage  trust  success  speed  pref")
	tm.expect("→ calculator")
	tm.expect("> ")

	// A destructive call is shown and asked about; declined, it never runs.
	tm.typ("delete the note todo.txt in documents\r")
	tm.expect(`tool: delete-note {"path":"todo.txt","space":"documents"}`)
	tm.expect(`agent tester wants to call delete-note({"path":"todo.txt","space":"documents"}): allow [o]nce, [a]lways for this agent, or [d]eny? `)
	tm.typ("n\r")
	tm.expect("not run: declined by the user")
	tm.expect("> ")

	// Ctrl-C cancels a slow call, not the session.
	tm.typ("wait slowly for 30 seconds\r")
	tm.expect(`tool: slow {"seconds":30}`)
	time.Sleep(300 * time.Millisecond) // let it start: the process gives no sign of it
	tm.typ("\x03")
	// The call would run 30 s; expect's deadline (20 s) is what proves
	// Ctrl-C cut it short, without judging how fast on this machine.
	tm.expect("cancelled: slow after")
	tm.expect(`"partial": true`)
	tm.expect("cancelled; back at the prompt")
	tm.expect("> ")
	tm.typ("calculate 2 + 2\r")
	tm.expect("2 + 2 = 4")
	tm.expect("> ")

	// Ctrl-C at the prompt: a hint, the session stays.
	tm.typ("\x03")
	tm.expect("(Ctrl-D or /quit to leave)")
	tm.expect("> ")
	tm.typ("/history\r")
	tm.expect("   3  delete the note todo.txt in documents")
	tm.expect("   4  wait slowly for 30 seconds")
	tm.expect("> ")

	tm.typ("/quit\r")
	tm.expect("bye")
	waited := make(chan error, 1)
	go func() { waited <- tm.cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("airs chat exited with %v; output:\n%s", err, tm.output())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("airs chat did not exit after /quit; output:\n%s", tm.output())
	}

	// The audit log has every call, the declined delete-note as the gate
	// that asked refused it (nothing ran).
	r := e.run("audit", "tail", "-n", "100", "--json")
	var outcomes []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct{ Tool, Outcome string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit tail: %v: %q", err, r.stdout)
		}
		outcomes = append(outcomes, rec.Tool+":"+rec.Outcome)
	}
	if got, want := strings.Join(outcomes, " "), "calculator:ok delete-note:error slow:cancelled calculator:ok"; got != want {
		t.Errorf("audit log: %s, want %s", got, want)
	}

	// The session log has each request, the declined one as skipped.
	data, err := os.ReadFile(filepath.Join(e.home, "sessions", "sessions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Channel, Request string
			Call             *struct{ Tool string }
			Execution        *struct{ Outcome string }
		}
		json.Unmarshal([]byte(line), &rec)
		if rec.Channel != "chat" || rec.Call == nil || rec.Execution == nil {
			t.Fatalf("session record: %s", line)
		}
		got = append(got, rec.Call.Tool+":"+rec.Execution.Outcome)
	}
	if s := strings.Join(got, " "); s != "calculator:ok delete-note:skipped slow:cancelled calculator:ok" {
		t.Errorf("session log: %s", s)
	}

	t.Logf("transcript:\n%s", tm.output())
	hist, _ := os.ReadFile(filepath.Join(e.home, "chat_history"))
	if !strings.Contains(string(hist), "delete the note todo.txt in documents\nwait slowly for 30 seconds\n") {
		t.Errorf("chat_history:\n%s", hist)
	}
}

func TestChatUsage(t *testing.T) {
	e := newEnv(t, "")
	e.run("chat", "extra").expect(t, 2, "", "'chat' takes no arguments")
	e.run("help", "chat").expect(t, 0, "airs chat --model none", "")
	e.run("chat", "--help").expect(t, 0, "-model model", "")
	// Not a terminal: input ends, the session ends cleanly.
	e.runStdin("calculate 6 * 7\n", "chat", "--model", "none").expect(t, 0, "6 * 7 = 42\n", "")
	// --json shows the result as JSON, as a script reads it; /json prints
	// the last one whole.
	e.runStdin("calculate 6 * 7\n", "chat", "--model", "none", "--json").expect(t, 0, `"result": 42`, "")
	e.runStdin("calculate 6 * 7\n/json\n", "chat", "--model", "none").expect(t, 0, `"result": 42`, "")
}
