package server

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// stateBackend keeps the page's sessions in dir.
type stateBackend struct {
	*uiBackend
	dir string
}

func (b stateBackend) UIStateDir() string { return b.dir }

func (b *reviewBackend) Grants() ([]guard.Grant, error) { return b.g.Grants() }
func (b *reviewBackend) RevokeGrant(by, agent, tool string) (bool, error) {
	return b.g.Revoke(agent, tool)
}

// A restarted server (a new Server over the same folder) knows the
// sessions signed in before: the page stays signed in, with its CSRF
// token. The file holds no session id; sign-out and expiry reach it.
func TestUISessionsSurviveRestart(t *testing.T) {
	u := newUIRig(t, nil)
	dir := t.TempDir()
	cfg := Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}}, MaxBody: 4096}
	start := func() *httptest.Server {
		s := New(stateBackend{u.back, dir}, cfg)
		ts := httptest.NewServer(s)
		t.Cleanup(func() { ts.Close(); s.hub.stop() })
		u.srv, u.ts = s, ts
		return ts
	}
	first := start()
	c, ck, csrf := u.signin("tok-alice")
	first.Close()

	start()
	// The cookie jar is keyed by host: the new server's address differs,
	// so the cookie goes along by hand, as the browser would send it.
	hdr := map[string]string{"Cookie": uiCookie + "=" + ck.Value}
	code, v := u.do(noRedirect(nil), "GET", "/ui/api/session", "", "", hdr)
	if code != 200 || v["agent"] != "alice" || v["csrf"] != csrf {
		t.Fatalf("after a restart: %d %v (want alice, the same CSRF token)", code, v)
	}
	if code, _ := u.do(noRedirect(nil), "PUT", "/ui/api/task", csrf, `{"task":"after restart"}`, hdr); code != 200 {
		t.Fatalf("a change after the restart: %d", code)
	}
	b, err := os.ReadFile(filepath.Join(dir, uiSessionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), ck.Value) {
		t.Fatal("the sessions file holds the session id itself")
	}
	if fi, _ := os.Stat(filepath.Join(dir, uiSessionsFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("the sessions file is %v, want 0600", fi.Mode().Perm())
	}
	_ = c

	// Signed out on the new server: gone from the file too.
	if code, _ := u.do(noRedirect(nil), "POST", "/ui/api/signout", csrf, "", hdr); code != 200 {
		t.Fatalf("sign-out: %d", code)
	}
	start()
	if code, _ := u.do(noRedirect(nil), "GET", "/ui/api/session", "", "", hdr); code != 401 {
		t.Fatalf("signed out, then restarted: %d, want 401", code)
	}

	// An expired session is not loaded.
	ss := newUISessions(8, time.Hour, 2*time.Hour)
	ss.path = filepath.Join(t.TempDir(), uiSessionsFile)
	now := time.Now()
	ss.now = func() time.Time { return now }
	old, _ := ss.create("alice")
	now = now.Add(30 * time.Minute)
	fresh, _ := ss.create("alice")
	ss2 := newUISessions(8, time.Hour, 2*time.Hour)
	ss2.path = ss.path
	ss2.now = func() time.Time { return now.Add(45 * time.Minute) }
	if err := ss2.load(); err != nil {
		t.Fatal(err)
	}
	if ss2.lookup(old) != nil || ss2.lookup(fresh) == nil {
		t.Fatalf("loaded: the idle one %v, the fresh one %v", ss2.lookup(old) != nil, ss2.lookup(fresh) != nil)
	}
	// A table that cannot be read is said, and nobody is signed in.
	os.WriteFile(ss.path, []byte("{not json"), 0o600)
	ss3 := newUISessions(8, time.Hour, 2*time.Hour)
	ss3.path = ss.path
	if err := ss3.load(); err == nil || ss3.count() != 0 {
		t.Fatalf("a broken table: %v, %d sessions", err, ss3.count())
	}
}

// The task box: a save names the version it edited; a task changed since
// (by the CLI, the API, another page) is not overwritten: 409 with the
// newer text. The stream sends a task changed elsewhere.
func TestUITaskVersionAndStream(t *testing.T) {
	u := newUIRig(t, nil)
	c, _, csrf := u.signin("tok-alice")
	code, v := u.do(c, "GET", "/ui/api/session", "", "", nil)
	base, _ := v["task_version"].(string)
	if code != 200 || base == "" {
		t.Fatalf("session: %d %v", code, v)
	}
	resp := u.raw(c, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	evs := sse(resp.Body)
	if e := next(t, evs); e[0] != "snapshot" || !strings.Contains(e[1], `"task_version":"`+base+`"`) {
		t.Fatalf("snapshot %v", e)
	}

	// Elsewhere (as `airs task set` or PUT /v1/context would).
	u.back.SetContext(context.Background(), "alice", ContextUpdate{Task: ptr("newer text")})
	var e [2]string
	for e = next(t, evs); e[0] != "task"; e = next(t, evs) {
	}
	var te struct{ Task, Version string }
	if json.Unmarshal([]byte(e[1]), &te) != nil || te.Task != "newer text" || te.Version == base || te.Version == "" {
		t.Fatalf("task event %s", e[1])
	}

	// The page still has the old version: refused, the newer task kept.
	code, v = u.do(c, "PUT", "/ui/api/task", csrf, `{"task":"old edit","base_version":"`+base+`"}`, nil)
	if code != 409 || v["error"] != "task_conflict" || v["task"] != "newer text" || v["version"] != te.Version {
		t.Fatalf("a stale save: %d %v", code, v)
	}
	if got := u.back.Task("alice"); got != "newer text" {
		t.Fatalf("the stale save overwrote the task: %q", got)
	}
	// With the newer version it goes through.
	code, v = u.do(c, "PUT", "/ui/api/task", csrf, `{"task":"mine after all","base_version":"`+te.Version+`"}`, nil)
	if code != 200 || v["task"] != "mine after all" || v["version"] != taskVersion("mine after all") {
		t.Fatalf("a current save: %d %v", code, v)
	}
	if code, _ := u.do(c, "PUT", "/ui/api/task", "", `{"task":"x"}`, nil); code != 403 {
		t.Fatalf("without the CSRF token: %d", code)
	}
}

func ptr[T any](v T) *T { return &v }

// A call of another agent that the guard holds reaches a reviewer's page
// on the stream at once; a decision and a revoked grant too. Revoking is
// a reviewer's.
func TestUIReviewQueueOnTheStream(t *testing.T) {
	u := newReviewRig(t)
	alice, _, ca := u.signin("tok-alice")
	bob, _, cb := u.signin("tok-bob")
	resp := u.raw(alice, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	evs := sse(resp.Body)
	if e := next(t, evs); e[0] != "snapshot" || !strings.Contains(e[1], `"grants":[]`) {
		t.Fatalf("snapshot %v (a reviewer's guard state lists the grants)", e)
	}
	if code, _ := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":1}}`); code != 428 {
		t.Fatalf("bob's erase: %d", code)
	}
	guardEvent := func(want string) string {
		t.Helper()
		for {
			e := next(t, evs)
			if e[0] == "guard" && strings.Contains(e[1], want) {
				return e[1]
			}
		}
	}
	g := guardEvent(`"caller":"bob"`)
	var st struct {
		Reviews []guard.Review `json:"reviews"`
	}
	json.Unmarshal([]byte(g), &st)
	if len(st.Reviews) != 1 || st.Reviews[0].Tool != "erase" {
		t.Fatalf("guard event %s", g)
	}
	id := st.Reviews[0].ID
	if code, v := u.do(alice, "POST", "/ui/api/reviews/"+id+"/approve", ca, `{"always":true}`, nil); code != 200 {
		t.Fatalf("always: %d %v", code, v)
	}
	guardEvent(`"grants":[{"caller":"bob","tool":"erase"`)

	if code, _ := u.do(bob, "POST", "/ui/api/grants/revoke", cb, `{"caller":"bob","tool":"erase"}`, nil); code != 403 {
		t.Fatalf("bob revokes: %d, want 403", code)
	}
	if code, _ := u.do(alice, "POST", "/ui/api/grants/revoke", "", `{"caller":"bob","tool":"erase"}`, nil); code != 403 {
		t.Fatalf("revoke without CSRF: %d, want 403", code)
	}
	code, v := u.do(alice, "POST", "/ui/api/grants/revoke", ca, `{"caller":"bob","tool":"erase"}`, nil)
	if code != 200 || v["revoked"] != true || len(v["grants"].([]any)) != 0 {
		t.Fatalf("revoke: %d %v", code, v)
	}
	guardEvent(`"grants":[]`)
	if code, _ := u.do(alice, "POST", "/ui/api/grants/revoke", ca, `{"caller":"bob","tool":"erase"}`, nil); code != 404 {
		t.Fatalf("revoking again: %d, want 404", code)
	}
	// Revoked, bob's call is held again.
	if code, _ := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":2}}`); code != 428 {
		t.Fatalf("bob's erase after the revoke: %d, want 428", code)
	}
	guardEvent(`"n":2`)
}

// A call held by another process (the CLI, on the same guard folder)
// reaches the page too: the server sees no event of it, and the page's
// queue is looked at every uiGuardRecalc.
func TestUIHeldElsewhereReachesThePage(t *testing.T) {
	u := newReviewRig(t)
	alice, _, _ := u.signin("tok-alice")
	resp := u.raw(alice, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	evs := sse(resp.Body)
	next(t, evs)
	other, err := guard.New(guard.Config{Dir: u.guardDir, Reviewers: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	tool := &pipeline.Tool{Name: "erase", Version: "1", Destructive: true}
	if d, err := other.Gate(context.Background(), pipeline.IntentCheck{CallID: "c1", Caller: "cli-agent", Provider: "test", Tool: tool, Params: json.RawMessage(`{"n":9}`)}); d.Review == "" {
		t.Fatalf("the other process's gate held nothing: %+v %v", d, err)
	}
	for {
		e := next(t, evs)
		if e[0] == "guard" && strings.Contains(e[1], `"caller":"cli-agent"`) {
			return
		}
	}
}

// logBackend: calls of other processes are appended to path.
type logBackend struct {
	*uiBackend
	path string
}

func (b logBackend) CallLogPath() string { return b.path }

// A call another process appended to the audit log reaches its agent's
// page (and no one else's); a call this server ran is shown once, though
// it arrives as an event and as a log line.
func TestUICallsOfOtherProcesses(t *testing.T) {
	u := newUIRig(t, nil)
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(logPath, []byte(`{"seq":1,"prev":"00","call_id":"before","caller":"alice","tool":"echo","outcome":"ok"}`+"\n"), 0o600)
	s := New(logBackend{u.back, logPath}, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}}, MaxBody: 4096})
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.hub.stop() })
	u.srv, u.ts = s, ts
	c, _, csrf := u.signin("tok-alice")
	resp := u.raw(c, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	evs := sse(resp.Body)
	if e := next(t, evs); e[0] != "snapshot" || strings.Contains(e[1], `"before"`) {
		t.Fatalf("snapshot %v: a call from before the server started is not new", e)
	}
	// This server's own call: an event now, its audit line later.
	code, v := u.do(c, "POST", "/ui/api/call", csrf, `{"tool":"echo","arguments":{"n":1}}`, nil)
	if code != 200 {
		t.Fatalf("call: %d %v", code, v)
	}
	e := next(t, evs)
	var own pipeline.CallEvent
	if e[0] != "call" || json.Unmarshal([]byte(e[1]), &own) != nil || own.CallID == "" {
		t.Fatalf("own call: %v", e)
	}
	f, _ := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	for _, l := range []string{
		`{"seq":2,"prev":"00","call_id":"` + own.CallID + `","caller":"alice","tool":"echo","outcome":"ok","latency_ns":5}`,
		`{"seq":3,"prev":"00","call_id":"cli-bob","caller":"bob","tool":"echo","outcome":"ok","latency_ns":5}`,
		`{"seq":4,"prev":"00","call_id":"cli-spec","caller":"alice","tool":"echo","outcome":"ok","speculative":true}`,
		`{"seq":5,"prev":"00","call_id":"cli-1","caller":"alice","provider":"test","tool":"echo","outcome":"error","error":"intent_verification_required","latency_ns":7}`,
	} {
		f.WriteString(l + "\n")
	}
	f.WriteString(`{"seq":6,"prev":"00","call_id":"torn"`) // a line still being written
	f.Close()
	e = next(t, evs)
	if e[0] != "call" || !strings.Contains(e[1], `"call_id":"cli-1"`) || !strings.Contains(e[1], `"error_kind":"intent_verification_required"`) {
		t.Fatalf("want the other process's call cli-1 (once, alice's own), got %v", e)
	}
	f, _ = os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`,"caller":"alice","tool":"echo","outcome":"ok"}` + "\n")
	f.Close()
	for e = next(t, evs); e[0] != "call"; e = next(t, evs) {
	}
	if !strings.Contains(e[1], `"call_id":"torn"`) {
		t.Fatalf("the completed line: %v", e)
	}
}
