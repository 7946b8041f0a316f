//go:build e2e

package httpapi

// The attention page's second round in a real browser: failures shown where
// the user acted (the server stopped), sessions kept across a restart, the
// focus after a review decision, held calls and the task pushed on the
// stream, the recent calls' layout and words, "Always" confirmed and grants
// revoked. The browser reaches the server through a proxy the test stops
// and points elsewhere.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/server"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// flipProxy forwards TCP to an upstream server; stopped, it refuses every
// connection (as a stopped server's port would) and cuts the open ones.
type flipProxy struct {
	l     net.Listener
	mu    sync.Mutex
	up    string
	down  bool
	conns map[net.Conn]struct{}
}

func newFlipProxy(t *testing.T, up string) *flipProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flipProxy{l: l, up: up, conns: map[net.Conn]struct{}{}}
	t.Cleanup(func() { l.Close(); p.stop() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *flipProxy) serve(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	up := p.up
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	u, err := net.Dial("tcp", up)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[u] = struct{}{}
	p.mu.Unlock()
	go func() { io.Copy(u, c); u.Close() }()
	io.Copy(c, u)
	c.Close()
}

// stop refuses new connections and cuts the open ones.
func (p *flipProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// start forwards again, to up.
func (p *flipProxy) start(up string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down, p.up = false, up
}

// behindProxy puts the rig's server behind a proxy: the browser's origin
// is the proxy's.
func (u *uiRig) behindProxy() *flipProxy {
	p := newFlipProxy(u.t, strings.TrimPrefix(u.base, "http://"))
	u.base = "http://" + p.l.Addr().String()
	return p
}

// newServer starts another server over the same engine (a restart: a new
// process would load the same AIRS_HOME) and returns its address.
func (u *uiRig) newServer() string {
	u.t.Helper()
	s := server.New(New(u.eng), server.Config{Tokens: []server.Token{{SHA256: server.HashToken("t-web"), Agent: "web"},
		{SHA256: server.HashToken("t-nobody"), Agent: "nobody"}}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		u.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	u.t.Cleanup(func() { cancel(); <-done })
	return l.Addr().String()
}

// overflow lists the elements wider than the viewport or reaching past
// its edges (none is the goal), and how much the page scrolls sideways.
func (u *uiRig) overflow() []string {
	return js[[]string](u, `(() => {
		const W = document.documentElement.clientWidth, bad = [];
		if (document.documentElement.scrollWidth > W) bad.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W);
		for (const e of document.querySelectorAll("body *")) {
			const r = e.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue;
			if (r.right > W + 0.5 || r.left < -0.5 || r.width > W) bad.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + String(e.className).replace(/ /g, ".") : "") + " " + Math.round(r.left) + "–" + Math.round(r.right));
		}
		return bad.slice(0, 12);
	})()`)
}

// shoot checks the layout at widths 375 and 1280 and saves a screenshot of
// each as name-W.png.
func (u *uiRig) shoot(name string) {
	u.t.Helper()
	dir := artifacts(u.t)
	for _, w := range []int64{375, 1280} {
		u.do(chromedp.EmulateViewport(w, 900))
		u.waitJS(`document.documentElement.clientWidth === `+fmt.Sprint(w), 2*time.Second, "the viewport resized")
		if bad := u.overflow(); len(bad) > 0 {
			u.t.Errorf("%s at %d px: elements wider than the viewport: %v", name, w, bad)
		}
		ctx, cancel := context.WithTimeout(u.ctx, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			u.t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, w))
		if err := os.WriteFile(p, png, 0o644); err != nil {
			u.t.Fatal(err)
		}
		u.t.Logf("screenshot %s", p)
	}
	u.do(chromedp.EmulateViewport(1280, 900))
}

// apiCall is POST /v1/call as agent (its bearer token).
func (u *uiRig) apiCall(token, tool, args string) (int, map[string]any) {
	u.t.Helper()
	return u.apiDo("POST", "/v1/call", token, `{"tool":"`+tool+`","arguments":`+args+`}`)
}

func (u *uiRig) apiDo(method, path, token, body string) (int, map[string]any) {
	u.t.Helper()
	req, _ := http.NewRequest(method, u.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// With the server stopped, Dismiss, Accept, Set task and a review decision
// each say in the page, where the user acted, that they failed, and leave
// the card, the task and the review usable; the page says it is offline.
// Back, the same buttons work.
func TestBrowserFailuresShowAndRecover(t *testing.T) {
	u := newUIRig(t, uiOptions{guard: true})
	p := u.behindProxy()
	u.signin("t-web", "web")
	u.writePDF("offline.pdf", "Offline", "test")
	card := `#cards .card[data-tool="pdf-extract"]`
	u.waitJS(`document.querySelector(`+quote(card)+`) !== null`, 3*time.Second, "a card")
	if code, _ := u.apiCall("t-nobody", "delete-note", `{"path":"todo.txt"}`); code != 428 {
		t.Fatalf("nobody's delete: %d", code)
	}
	item := `#reviews li[data-tool="delete-note"]`
	u.waitJS(`document.querySelector(`+quote(item)+`) !== null`, 3*time.Second, "the held call in the queue")

	p.stop()
	u.waitJS(`!document.getElementById("offline").hidden`, 5*time.Second, "the page says the server cannot be reached")

	usable := func(sel, what string) {
		t.Helper()
		u.waitJS(`(() => { const e = document.querySelector(`+quote(sel)+`); return e !== null && e.getAttribute("aria-busy") !== "true" &&
			[...e.querySelectorAll("button")].every(b => !b.disabled); })()`, 5*time.Second, what+": usable again")
	}
	problem := func(sel, want, what string) {
		t.Helper()
		u.waitJS(`(() => { const p = document.querySelector(`+quote(sel+" .problem")+`); return p !== null && p.offsetParent !== null && p.textContent.includes(`+quote(want)+`); })()`,
			5*time.Second, what+": the failure shown in place")
	}
	u.do(chromedp.Click(card + " button.dismiss"))
	problem(card, "Dismiss failed: the server cannot be reached", "Dismiss")
	usable(card, "the card after Dismiss")
	u.do(chromedp.Click(card + " button.accept"))
	problem(card, "Accept failed: the server cannot be reached", "Accept")
	usable(card, "the card after Accept")
	if !js[bool](u, `document.activeElement === document.querySelector(`+quote(card+" button.accept")+`)`) {
		t.Errorf("after a failed Accept the focus is on %q", js[string](u, `document.activeElement.outerHTML.slice(0, 80)`))
	}

	u.do(chromedp.SendKeys("#task", "summarize the offline notes"), chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`(() => { const s = document.getElementById("task-status"); return s.classList.contains("error") && s.textContent.startsWith("Not saved: the server cannot be reached"); })()`,
		5*time.Second, "Set task: the failure shown")
	usable("#task-form", "the task form")
	if v := js[string](u, `document.getElementById("task").value`); v != "summarize the offline notes" {
		t.Errorf("the typed task was lost: %q", v)
	}

	u.do(chromedp.Click(item + " button.approve"))
	problem(item, "Not decided: the server cannot be reached", "Allow once")
	usable(item, "the review")
	u.shoot("attention-offline")

	// Back: the same card dismisses, the review is decided, the task saves.
	p.start(p.up)
	u.waitJS(`document.getElementById("conn").textContent === "live" && document.getElementById("offline").hidden`, 10*time.Second, "live again")
	u.do(chromedp.Click(card + " button.dismiss"))
	u.waitJS(`document.querySelector(`+quote(card)+`) === null`, 3*time.Second, "dismissed once the server is back")
	u.do(chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`document.getElementById("task-status").textContent === "Task set."`, 3*time.Second, "the task saved once the server is back")
	if got := u.eng.Recommender().Task("web"); got != "summarize the offline notes" {
		t.Fatalf("the recommender's task is %q", got)
	}
	u.do(chromedp.Click(item + " button.approve"))
	u.waitJS(`document.querySelector(`+quote(item)+`) === null`, 3*time.Second, "approved once the server is back")
}

// A restarted server knows the page's session: the page reloads signed in
// and its changes (CSRF) still go through.
func TestBrowserRestartKeepsSession(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	p := u.behindProxy()
	u.signin("t-web", "web")
	p.stop()
	u.waitJS(`!document.getElementById("offline").hidden`, 5*time.Second, "offline while the server is down")
	p.start(u.newServer())
	u.waitJS(`document.getElementById("conn").textContent === "live"`, 10*time.Second, "the page reconnects to the restarted server")
	if p := js[string](u, `location.pathname`); p != "/" {
		t.Fatalf("after the restart the page is at %s", p)
	}
	u.do(chromedp.SendKeys("#task", "after the restart"), chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`document.getElementById("task-status").textContent === "Task set."`, 3*time.Second, "a change after the restart")
	u.do(chromedp.Reload(), chromedp.WaitVisible("#agent"))
	u.waitJS(`location.pathname === "/" && document.getElementById("agent").textContent === "web"`, 5*time.Second, "still signed in after a reload")
	if _, err := os.Stat(filepath.Join(u.cfg.Home, "ui", "sessions.json")); err != nil {
		t.Fatalf("no sessions file in AIRS_HOME: %v", err)
	}
}

// Held calls of another agent and of another process (the CLI) reach the
// reviewer on the stream; after a decision the focus moves to the next
// review, then to the queue's heading; "Always" asks first, and its grant
// is listed with Revoke. A non-reviewer's note speaks plainly.
func TestBrowserReviewPushFocusAndGrants(t *testing.T) {
	u := newUIRig(t, uiOptions{guard: true})
	u.signin("t-web", "web")
	item := `#reviews li[data-tool="delete-note"]`

	start := time.Now()
	if code, _ := u.apiCall("t-nobody", "delete-note", `{"path":"todo.txt"}`); code != 428 {
		t.Fatalf("nobody's delete: %d", code)
	}
	u.waitJS(`[...document.querySelectorAll(`+quote(item)+`)].some(li => li.textContent.includes("nobody → delete-note"))`, 2*time.Second, "another agent's held call on the stream")
	t.Logf("another agent's held call → the reviewer's page: %v", time.Since(start).Round(time.Millisecond))

	// Another process on the same guard store, as `airs call` would be.
	cli, err := guard.New(guard.Config{Dir: u.cfg.GuardDir(), Reviewers: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	tool := &pipeline.Tool{Name: "delete-note", Version: "1.0.0", Destructive: true}
	if d, _ := cli.Gate(context.Background(), pipeline.IntentCheck{CallID: "cli-1", Caller: "cli-agent", Provider: "notes", Tool: tool, Params: json.RawMessage(`{"path":"cli.txt"}`)}); d.Review == "" {
		t.Fatalf("the other process's guard held nothing: %+v", d)
	}
	u.waitJS(`[...document.querySelectorAll(`+quote(item)+`)].some(li => li.textContent.includes("cli-agent → delete-note"))`, 2*time.Second, "the CLI's held call on the stream")
	t.Logf("another process's held call → the reviewer's page: %v", time.Since(start).Round(time.Millisecond))
	if n := js[int](u, `document.querySelectorAll(`+quote(item)+`).length`); n != 2 {
		t.Fatalf("%d reviews, want 2", n)
	}

	// Enter on the first review's "Allow once": the focus goes to the next.
	first := js[string](u, `document.querySelector(`+quote(item)+`).dataset.id`)
	second := js[string](u, `document.querySelectorAll(`+quote(item)+`)[1].dataset.id`)
	u.do(chromedp.Focus(`#reviews li[data-id="`+first+`"] button.approve`), chromedp.KeyEvent(kb.Enter))
	u.waitJS(`document.querySelector('#reviews li[data-id="`+first+`"]') === null`, 3*time.Second, "the decided review leaves")
	u.waitJS(`document.activeElement !== null && document.activeElement.closest('#reviews li[data-id="`+second+`"]') !== null`, 2*time.Second,
		"the focus on the next review (it is on "+js[string](u, `document.activeElement.outerHTML.slice(0, 60)`)+")")
	// The last one: the focus goes to the queue's heading.
	u.do(chromedp.Focus(`#reviews li[data-id="`+second+`"] button.deny`), chromedp.KeyEvent(kb.Enter))
	u.waitJS(`document.querySelectorAll(`+quote(item)+`).length === 0`, 3*time.Second, "the queue empties")
	u.waitJS(`document.activeElement === document.getElementById("review-h")`, 2*time.Second, "the focus on the queue's heading")

	// "Always for this agent" asks; Cancel decides nothing.
	os.WriteFile(filepath.Join(u.notes, "a.txt"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(u.notes, "b.txt"), []byte("b"), 0o644)
	if code, _ := u.apiCall("t-nobody", "delete-note", `{"path":"a.txt"}`); code != 428 {
		t.Fatalf("nobody's delete of a.txt: %d", code)
	}
	u.waitJS(`document.querySelectorAll(`+quote(item)+`).length === 1`, 2*time.Second, "held again")
	u.do(chromedp.Click(item + " button.always"))
	u.waitJS(`document.getElementById("always").open && document.activeElement.id === "always-cancel"`, 2*time.Second, "the Always dialog, Cancel focused")
	if txt := js[string](u, `document.getElementById("always").textContent`); !strings.Contains(txt, "nobody") || !strings.Contains(txt, "delete-note") || !strings.Contains(txt, "revoke") {
		t.Errorf("the Always dialog says %q", txt)
	}
	u.do(chromedp.Click("#always-cancel"))
	u.waitJS(`!document.getElementById("always").open`, 2*time.Second, "Cancel closes it")
	time.Sleep(300 * time.Millisecond)
	if n := js[int](u, `document.querySelectorAll(`+quote(item)+`).length`); n != 1 {
		t.Fatal("Cancel decided the review")
	}
	if gs, _ := u.eng.Guard().Grants(); len(gs) != 0 {
		t.Fatalf("Cancel granted: %v", gs)
	}
	u.do(chromedp.Click(item + " button.always"))
	u.waitJS(`document.getElementById("always").open`, 2*time.Second, "the Always dialog again")
	u.do(chromedp.Click("#always-ok"))
	grant := `#grants li[data-caller="nobody"][data-tool="delete-note"]`
	u.waitJS(`document.querySelector(`+quote(grant)+`) !== null && !document.getElementById("grants-box").hidden`, 3*time.Second, "the grant listed")
	if code, v := u.apiCall("t-nobody", "delete-note", `{"path":"b.txt"}`); code != 200 {
		t.Fatalf("granted, nobody's delete: %d %v", code, v)
	}
	u.shoot("attention-grants")
	u.do(chromedp.Click(grant + " button.revoke"))
	u.waitJS(`document.querySelector(`+quote(grant)+`) === null && document.activeElement === document.getElementById("grants-h")`, 3*time.Second, "revoked, the focus on the list's heading")
	if gs, _ := u.eng.Guard().Grants(); len(gs) != 0 {
		t.Fatalf("revoked in the page, the guard still has %v", gs)
	}
	os.WriteFile(filepath.Join(u.notes, "c.txt"), []byte("c"), 0o644)
	if code, _ := u.apiCall("t-nobody", "delete-note", `{"path":"c.txt"}`); code != 428 {
		t.Fatalf("revoked, nobody's delete: %d, want 428", code)
	}

	// A non-reviewer: a plain note, no grants.
	u.do(chromedp.Click("#signout"))
	u.waitJS(`location.pathname === "/ui/signin"`, 3*time.Second, "signed out")
	u.signin("t-nobody", "nobody")
	note := js[string](u, `document.getElementById("review-note").textContent`)
	if note == "" || strings.ContainsAny(note, "`") || strings.Contains(note, "guard.") || strings.Contains(note, "airs review") {
		t.Errorf("the non-reviewer's note: %q", note)
	}
	if !js[bool](u, `document.getElementById("grants-box").hidden`) {
		t.Error("a non-reviewer sees the grants")
	}
}

// The task box follows the task set elsewhere (the API, the CLI's file);
// a save from a page that still shows an older task does not overwrite
// the newer one: the conflict is shown, and the user chooses.
func TestBrowserTaskStaysCurrent(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	u.signin("t-web", "web")
	if code, _ := u.apiDo("PUT", "/v1/context", "t-web", `{"task":"set by the API"}`); code != 200 {
		t.Fatalf("PUT /v1/context: %d", code)
	}
	u.waitJS(`document.getElementById("task").value === "set by the API"`, 3*time.Second, "the API's task in the open page")

	tasks, err := recommender.OpenTasks(u.cfg.Home)
	if err != nil {
		t.Fatal(err)
	}
	if err := tasks.Set("web", "set by the CLI"); err != nil {
		t.Fatal(err)
	}
	u.waitJS(`document.getElementById("task").value === "set by the CLI"`, 4*time.Second, "the CLI's task in the open page")

	// The user edits; meanwhile the task changes elsewhere.
	js[bool](u, `(document.getElementById("task").value = "", true)`)
	u.do(chromedp.SendKeys("#task", "my older edit"))
	if code, _ := u.apiDo("PUT", "/v1/context", "t-web", `{"task":"newer from the API"}`); code != 200 {
		t.Fatal("PUT /v1/context")
	}
	u.waitJS(`document.getElementById("task-status").textContent.includes("changed elsewhere")`, 4*time.Second, "the page says the task changed while editing")
	if v := js[string](u, `document.getElementById("task").value`); v != "my older edit" {
		t.Fatalf("the user's text was replaced while editing: %q", v)
	}
	u.do(chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`!document.getElementById("task-conflict").hidden && document.getElementById("task-theirs").textContent === "newer from the API"`, 3*time.Second, "the conflict shown")
	if got := u.eng.Recommender().Task("web"); got != "newer from the API" {
		t.Fatalf("the old text overwrote the newer task: %q", got)
	}
	u.shoot("attention-task-conflict")
	u.do(chromedp.Click("#task-keep-mine"))
	u.waitJS(`document.getElementById("task-status").textContent === "Task set." && document.getElementById("task-conflict").hidden`, 3*time.Second, "saved mine on purpose")
	if got := u.eng.Recommender().Task("web"); got != "my older edit" {
		t.Fatalf("the recommender's task is %q", got)
	}
}

// The recent calls: a long tool name, a held call, a refused one; human
// words for the outcomes; nothing wider than the window at 375 and 1280
// px, the full name on demand; a result's text shown as text.
func TestBrowserRecentCallsReadable(t *testing.T) {
	long := "extract-the-quarterly-financial-statement-tables-from-the-report"
	u := newUIRig(t, uiOptions{guard: true, register: func(reg *pipeline.Registry) {
		err := reg.Register("reports", pipeline.Tool{Name: long, Version: "1.0.0", Description: "Extract tables.",
			Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
			Trust:      pipeline.TL2, LatencyClass: pipeline.Instant, Idempotent: true, ReadOnly: true},
			pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
				return json.Marshal("Q1 revenue 10\nQ2 revenue 12\n")
			}))
		if err != nil {
			t.Fatal(err)
		}
	}})
	u.signin("t-web", "web")
	if code, v := u.apiCall("t-web", long, `{}`); code != 200 {
		t.Fatalf("the long tool: %d %v", code, v)
	}
	if code, _ := u.apiCall("t-web", "delete-note", `{"path":"todo.txt"}`); code != 428 {
		t.Fatalf("web's delete: %d, want 428 (held)", code)
	}
	u.apiCall("t-web", "no-such-tool", `{}`)
	u.waitJS(`document.querySelectorAll("#calls tr").length >= 3`, 3*time.Second, "three recent calls")

	// A call of web's from another process (as `airs call` appends it to
	// the same audit log): it never passes the server's pipeline.
	cliLog, err := audit.Open(u.cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	defer cliLog.Close()
	cliReg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	if err := cliReg.Register("cli", pipeline.Tool{Name: "cli-only-tool", Version: "1.0.0", Description: "A tool of the CLI's.",
		Parameters: json.RawMessage(`{"type":"object"}`), Trust: pipeline.TL2, LatencyClass: pipeline.Instant, Idempotent: true, ReadOnly: true},
		pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
			return json.RawMessage(`"done"`), nil
		})); err != nil {
		t.Fatal(err)
	}
	cliM, err := pipeline.NewManager(pipeline.Config{Registry: cliReg, Audit: cliLog})
	if err != nil {
		t.Fatal(err)
	}
	defer cliM.Close()
	start := time.Now()
	if _, err := cliM.Call(context.Background(), pipeline.Request{Tool: "cli-only-tool", Caller: "web", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatalf("the CLI's call: %v", err)
	}
	u.waitJS(`[...document.querySelectorAll("#calls tr")].some(tr => tr.cells[0].textContent === "cli-only-tool" && tr.dataset.kind === "ok")`, 3*time.Second, "the CLI's call in web's recent calls")
	t.Logf("a call of another process → the page: %v", time.Since(start).Round(time.Millisecond))
	if n := js[int](u, `[...document.querySelectorAll("#calls tr")].filter(tr => tr.cells[0].textContent === `+quote(long)+`).length`); n != 1 {
		t.Errorf("the server's own call is listed %d times (it is an event and an audit line)", n)
	}
	held := js[string](u, `[...document.querySelectorAll("#calls tr")].find(tr => tr.dataset.kind === "intent_verification_required").cells[2].textContent`)
	if held != "Waiting for confirmation" {
		t.Errorf("a held call's outcome reads %q", held)
	}
	if txt := js[string](u, `document.getElementById("calls").textContent`); strings.Contains(txt, "_") {
		t.Errorf("raw ids in recent calls: %q", txt)
	}
	// The long name is cut short; its button shows it whole.
	row := `[...document.querySelectorAll("#calls tr")].find(tr => tr.cells[0].textContent === ` + quote(long) + `)`
	if !js[bool](u, `(() => { const b = `+row+`.querySelector("button.cell"); return b.scrollWidth > b.clientWidth && b.title.startsWith(`+quote(long)+`); })()`) {
		t.Error("the long tool name is not cut short with its full name in a title")
	}
	u.do(chromedp.EmulateViewport(375, 900))
	js[bool](u, `(`+row+`.querySelector("button.cell").click(), true)`)
	if !js[bool](u, `(() => { const b = `+row+`.querySelector("button.cell"); return b.getAttribute("aria-expanded") === "true" && b.scrollWidth <= b.clientWidth + 1; })()`) {
		t.Error("opened, the long tool name is still cut")
	}
	u.do(chromedp.EmulateViewport(1280, 900))

	// A text result is text: line breaks, no \n, no quotes.
	u.do(chromedp.SendKeys("#task", "list the files in documents"), chromedp.Click(`#task-form button[type="submit"]`))
	u.writePDF("lines.pdf", "First line", "Second line")
	card := `#cards .card[data-tool="pdf-extract"]`
	u.waitJS(`document.querySelector(`+quote(card)+`) !== null`, 3*time.Second, "a pdf-extract card")
	u.do(chromedp.Click(card + " button.accept"))
	res := `document.querySelector('#results li[data-tool="pdf-extract"]')`
	u.waitJS(res+` !== null`, 5*time.Second, "the result")
	txt := js[string](u, res+`.innerText`)
	if strings.Contains(txt, `\n`) || !strings.Contains(txt, "First line") {
		t.Errorf("the result shows %q", txt)
	}
	u.shoot("attention-calls")
}
