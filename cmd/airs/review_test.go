package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// guardEnv is an installation where the agent "tester" may delete in
// documents.
func guardEnv(t *testing.T, extra string) *env {
	t.Helper()
	e := newEnv(t, "")
	yaml := `
spaces:
  documents: ./docs
agents:
  tester:
    capabilities: ["ReadSpace(documents)", "WriteSpace(documents)"]
cli:
  users:
    "*": tester
` + extra
	if err := os.WriteFile(e.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		os.WriteFile(filepath.Join(e.docs, n), []byte(n), 0o644)
	}
	return e
}

var confirmationID = regexp.MustCompile(`cf-[0-9a-f]{20}`)

func (e *env) exists(name string) bool {
	_, err := os.Stat(filepath.Join(e.docs, name))
	return err == nil
}

// Without a terminal, a destructive call exits 23 with a confirmation id
// and deletes nothing; `airs review approve` lets that call through once,
// `deny` refuses it; every decision is in the audit chain.
func TestReviewFromTheCLI(t *testing.T) {
	e := guardEnv(t, "")
	del := func(name string) runResult {
		return e.run("call", "delete-file", "--args", `{"space":"documents","path":"`+name+`"}`)
	}
	r := del("a.txt")
	r.expect(t, 23, "", "intent verification required")
	id := confirmationID.FindString(r.stderr)
	if id == "" || !strings.Contains(r.stderr, "airs review approve") || !e.exists("a.txt") {
		t.Fatalf("held call: id %q, file there %v\n%s", id, e.exists("a.txt"), r.stderr)
	}
	list := e.run("review", "--json")
	list.expect(t, 0, id, "")
	var rv struct{ ID, Kind, Status, Caller, Tool string }
	if err := json.Unmarshal([]byte(strings.TrimSpace(list.stdout)), &rv); err != nil || rv.ID != id || rv.Status != "pending" || rv.Caller != "tester" || rv.Tool != "delete-file" {
		t.Fatalf("review list: %+v %v\n%s", rv, err, list.stdout)
	}
	e.run("review").expect(t, 0, "delete-file({\"space\":\"documents\",\"path\":\"a.txt\"})", "")
	e.run("review", "approve", id).expect(t, 0, id+" approved", "")
	e.run("review", "approve", id).expect(t, 1, "", "already decided")
	del("b.txt").expect(t, 23, "", "") // approving a.txt is not approving b.txt
	del("a.txt").expect(t, 0, `"deleted": true`, "")
	if e.exists("a.txt") {
		t.Fatal("approved delete left the file")
	}

	r = del("c.txt")
	id2 := confirmationID.FindString(r.stderr)
	e.run("review", "deny", id2).expect(t, 0, "denied", "")
	del("c.txt").expect(t, 13, "", "denied this call")
	if !e.exists("c.txt") {
		t.Fatal("a denied call deleted the file")
	}
	tail := e.run("audit", "tail", "--json", "-n", "10")
	var intents []string
	for _, line := range strings.Split(strings.TrimSpace(tail.stdout), "\n") {
		var rec struct{ Tool, Intent, Review, Reviewer, Error string }
		json.Unmarshal([]byte(line), &rec)
		if rec.Tool == "delete-file" {
			intents = append(intents, rec.Intent+"/"+rec.Error+"/"+strings.TrimPrefix(rec.Reviewer, "cli:")[:min(len(rec.Reviewer), 1)])
		}
	}
	if got := strings.Join(intents, " "); !regexp.MustCompile(`^required/intent_verification_required/ required/intent_verification_required/ approved//. required/intent_verification_required/ denied/intent_misaligned/.$`).MatchString(got) {
		t.Fatalf("audit decisions: %s\n%s", got, tail.stdout)
	}
	e.run("audit", "verify").expect(t, 0, "chain intact", "")
	e.run("audit", "tail").expect(t, 0, "[approved by cli:", "")
	e.run("help", "exit-codes").expect(t, 0, "intent_verification_required", "")
	e.run("tools", "show", "delete-file").expect(t, 0, "effect:       destructive", "")
	e.run("review", "frobnicate").expect(t, 2, "", "unknown 'review' action")
}

// At a terminal, airs call asks; "always" lets the agent's later calls of
// the tool through without asking, until revoked.
func TestReviewAtATerminal(t *testing.T) {
	e := guardEnv(t, "")
	call := func(name, answer string) (string, int) {
		cmd := exec.Command(airsBin, "--config", e.config, "call", "delete-file", "--args", `{"space":"documents","path":"`+name+`"}`)
		cmd.Env = append(os.Environ(), "AIRS_HOME="+e.home, "AIRS_CONFIG=", "HOME="+e.dir)
		f, err := pty.Start(cmd)
		if err != nil {
			t.Skipf("no pty: %v", err)
		}
		defer f.Close()
		var mu sync.Mutex
		var out strings.Builder
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 4096)
			for {
				n, err := f.Read(buf)
				mu.Lock()
				out.Write(buf[:n])
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		if answer != "" {
			deadline := time.Now().Add(20 * time.Second)
			for {
				mu.Lock()
				asked := strings.Contains(out.String(), "[d]eny? ")
				mu.Unlock()
				if asked {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("never asked:\n%s", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			io.WriteString(f, answer+"\r")
		}
		err = cmd.Wait()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
		mu.Lock()
		defer mu.Unlock()
		return out.String(), code
	}
	out, code := call("a.txt", "d")
	if code != 13 || !strings.Contains(out, "agent tester wants to call delete-file({\"space\":\"documents\",\"path\":\"a.txt\"})") || !e.exists("a.txt") {
		t.Fatalf("deny: exit %d, file there %v\n%s", code, e.exists("a.txt"), out)
	}
	if out, code := call("a.txt", "o"); code != 0 || e.exists("a.txt") || strings.Count(out, "[d]eny? ") != 1 {
		t.Fatalf("once: exit %d\n%s", code, out)
	}
	// Asked by the gate: one call, one audit record each, the answer's
	// person named in it.
	tail := e.run("audit", "tail", "--json", "-n", "10")
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(tail.stdout), "\n") {
		var rec struct{ Tool, Outcome, Intent, Reviewer string }
		json.Unmarshal([]byte(line), &rec)
		if rec.Tool == "delete-file" {
			got = append(got, rec.Outcome+"/"+rec.Intent+"/"+strings.SplitN(rec.Reviewer, ":", 2)[0])
		}
	}
	if strings.Join(got, " ") != "error/denied/cli ok/approved/cli" {
		t.Fatalf("audit of the answered calls: %v\n%s", got, tail.stdout)
	}
	if out, code := call("b.txt", "a"); code != 0 || e.exists("b.txt") {
		t.Fatalf("always: exit %d\n%s", code, out)
	}
	out, code = call("c.txt", "") // granted: no question
	if code != 0 || e.exists("c.txt") || strings.Contains(out, "[d]eny?") {
		t.Fatalf("after always: exit %d\n%s", code, out)
	}
	e.run("review", "grants").expect(t, 0, "tester  delete-file", "")
	e.run("review", "revoke", "tester", "delete-file").expect(t, 0, "revoked", "")
	e.run("call", "delete-file", "--args", `{"space":"documents","path":"d.txt"}`).expect(t, 23, "", "")
}
