//go:build e2e

package httpapi

// The attention UI in a real browser: Debian's chromium, headless, driven by
// chromedp, against the real engine (no-LLM mode, the watcher on) behind the
// real server. No Ollama is needed. Screenshots go to $AIRS_E2E_ARTIFACTS
// (default: a temp dir, logged).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/demodata"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium is the browser binary, or "" (the test skips).
func chromium() string {
	if p := os.Getenv("AIRS_CHROMIUM"); p != "" {
		return p
	}
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// uiRig is the served engine and one browser tab.
type uiRig struct {
	t     *testing.T
	base  string
	cfg   *config.Config
	eng   *engine.Engine
	ctx   context.Context
	notes string // the notes folder delete-note deletes from
}

type uiOptions struct {
	ttl     time.Duration
	timeout time.Duration // the server's RequestTimeout: how long one event stream lasts
	guard   bool          // the guard on, web its reviewer
	// selfApprove: guard.self_approve, so web's confirmation in the page
	// approves its own held call (by default another reviewer must).
	selfApprove bool
	// register adds tools beside delete-note.
	register func(reg *pipeline.Registry)
}

func newUIRig(t *testing.T, o uiOptions) *uiRig {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("e2e browser tests: no chromium binary on PATH (apt-get install -y chromium; scripts/e2e.sh installs it)")
	}
	u := &uiRig{t: t}
	u.base, u.cfg, u.eng = newServedEngineWith(t, servedOptions{watch: true, ttl: o.ttl, timeout: o.timeout, guard: o.guard, selfApprove: o.selfApprove, register: func(reg *pipeline.Registry, cfg *config.Config) {
		u.notes = filepath.Join(cfg.Spaces["documents"], "notes")
		registerDeleteNote(t, reg, u.notes)
		if o.register != nil {
			o.register(reg)
		}
	}})
	start := time.Now()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-features", "Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithErrorf(func(string, ...any) {}))
	t.Cleanup(func() { cancelC(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Logf("chromium up in %v", time.Since(start).Round(time.Millisecond))
	u.ctx = ctx
	return u
}

func registerDeleteNote(t *testing.T, reg *pipeline.Registry, notes string) {
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := reg.Register("notes", pipeline.Tool{
		Name: "delete-note", Version: "1.0.0",
		Description: "Delete a note file from the notes folder permanently (remove, erase the note).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the note file to delete"}},"required":["path"],"additionalProperties":false}`),
		Trust:       pipeline.TL2, LatencyClass: pipeline.Instant, Idempotent: false, Destructive: true,
	}, pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		var p struct{ Path string }
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if err := os.Remove(filepath.Join(notes, filepath.Base(p.Path))); err != nil {
			return nil, pipeline.Reject("not_found", err.Error())
		}
		return json.Marshal(map[string]string{"deleted": p.Path})
	}))
	if err != nil {
		t.Fatal(err)
	}
}

// do runs browser steps, failing the test on an error.
func (u *uiRig) do(steps ...chromedp.Action[chromedp.Void]) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		u.t.Fatal(err)
	}
}

// js evaluates an expression (a promise is awaited) in the page.
func js[T any](u *uiRig, expr string) T {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(u.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		u.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitJS polls a boolean expression until it holds; it fails after d and
// returns how long it took.
func (u *uiRig) waitJS(expr string, d time.Duration, what string) time.Duration {
	u.t.Helper()
	start := time.Now()
	for {
		if js[bool](u, expr) {
			return time.Since(start)
		}
		if time.Since(start) > d {
			u.t.Fatalf("%s: not within %v (%s); the page: %s", what, d, expr, js[string](u, `location.href + " | " + (document.body ? document.body.innerText.slice(0, 600) : "")`))
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// signin goes to / (sent to the form), types the token and submits it.
func (u *uiRig) signin(token, agent string) {
	u.t.Helper()
	u.do(chromedp.Navigate(u.base+"/"), chromedp.WaitVisible("#token"))
	if p := js[string](u, `location.pathname`); p != "/ui/signin" {
		u.t.Fatalf("/ without a session shows %s, want the sign-in form", p)
	}
	u.do(chromedp.SendKeys("#token", token), chromedp.Submit("#token"))
	u.waitJS(`location.pathname === "/" && document.getElementById("agent") !== null && document.getElementById("agent").textContent === `+quote(agent),
		5*time.Second, "signed in as "+agent)
	u.waitJS(`document.getElementById("conn").textContent === "live"`, 5*time.Second, "the event stream is live")
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// cards are the page's cards' tools, in order.
func (u *uiRig) cards() []string {
	return js[[]string](u, `[...document.querySelectorAll("#cards .card")].map(c => c.dataset.tool)`)
}

func (u *uiRig) cardCount(tool string) int {
	return js[int](u, `document.querySelectorAll('#cards .card[data-tool=`+quote(tool)+`]').length`)
}

// auditHas reports whether the audit log has a call of tool by caller with
// the outcome.
func (u *uiRig) auditHas(tool, caller, outcome string) bool {
	f, err := os.Open(u.cfg.AuditPath())
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r audit.Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Tool == tool && r.Caller == caller && r.Outcome == outcome {
			return true
		}
	}
	return false
}

// feedback counts the recommender's kept answers of outcome for tool.
func (u *uiRig) feedback(tool, outcome string) int {
	b, _ := os.ReadFile(filepath.Join(u.cfg.Home, "recommender", "feedback.jsonl"))
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		var fb struct{ Tool, Outcome, Caller string }
		if json.Unmarshal([]byte(line), &fb) == nil && fb.Tool == tool && fb.Outcome == outcome && fb.Caller == "web" {
			n++
		}
	}
	return n
}

func (u *uiRig) writePDF(name string, lines ...string) time.Time {
	u.t.Helper()
	start := time.Now()
	if err := demodata.WritePDF(filepath.Join(u.cfg.Spaces["documents"], name), lines); err != nil {
		u.t.Fatal(err)
	}
	return start
}

func artifacts(t *testing.T) string {
	dir := os.Getenv("AIRS_E2E_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "airs-e2e-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Sign in; a PDF landing in the watched space becomes a card within 2 s,
// announced in the live region and counted in the title; Accept runs it
// through the pipeline (the result in the page, the call in the audit log
// and in recent calls); Dismiss removes a card and teaches the recommender.
func TestBrowserSuggestionAcceptDismiss(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	u.signin("t-web", "web")
	if n := len(u.cards()); n != 0 {
		t.Fatalf("cards before anything happened: %v", u.cards())
	}
	live0 := js[string](u, `document.getElementById("live").textContent`)
	title0 := js[string](u, `document.title`)

	start := u.writePDF("new-invoice.pdf", "Invoice 7", "Total 99")
	u.waitJS(`[...document.querySelectorAll('#cards .card[data-tool="pdf-extract"] pre.args')].some(p => p.textContent.includes("new-invoice.pdf"))`,
		2*time.Second-time.Since(start), "a pdf-extract card for the new PDF within 2 s of the file landing")
	t.Logf("file → card in the page: %v", time.Since(start).Round(time.Millisecond))
	live := js[string](u, `document.getElementById("live").textContent`)
	if live == live0 || !strings.Contains(live, "New suggestion: pdf-extract") {
		t.Fatalf("the live region did not announce the card: %q → %q", live0, live)
	}
	if role := js[string](u, `document.getElementById("live").getAttribute("aria-live")`); role != "polite" {
		t.Fatalf("live region aria-live=%q", role)
	}
	title := js[string](u, `document.title`)
	if title == title0 || !strings.HasPrefix(title, fmt.Sprintf("(%d) ", len(u.cards()))) {
		t.Fatalf("tab title %q → %q: want the count", title0, title)
	}
	if js[bool](u, `document.activeElement !== document.body && document.activeElement !== null && document.activeElement.closest(".card") !== null`) {
		t.Fatal("a new card took the focus")
	}
	// The card shows the tool, its arguments, the reason and its age.
	card := `document.querySelector('#cards .card[data-tool="pdf-extract"]')`
	for _, sel := range []string{"h3", "pre.args", ".reason", ".signals li", "time[data-ago]"} {
		if txt := js[string](u, card+`.querySelector(`+quote(sel)+`).textContent.trim()`); txt == "" {
			t.Errorf("the card's %s is empty", sel)
		}
	}

	if u.auditHas("pdf-extract", "web", "ok") {
		t.Fatal("pdf-extract ran before it was accepted")
	}
	u.do(chromedp.Click(`#cards .card[data-tool="pdf-extract"] button.accept`))
	u.waitJS(`[...document.querySelectorAll('#results li[data-tool="pdf-extract"]')].some(li => li.dataset.outcome === "ok" && li.textContent.includes("Invoice 7"))`,
		5*time.Second, "the accepted call's result in the page")
	if !u.auditHas("pdf-extract", "web", "ok") {
		t.Fatal("the audit log has no pdf-extract call by web")
	}
	u.waitJS(`[...document.querySelectorAll('#calls tr')].some(tr => tr.cells[0].textContent === "pdf-extract" && tr.cells[1].textContent === "web" && tr.cells[2].textContent === "OK" && tr.dataset.kind === "ok" && /s$/.test(tr.cells[3].textContent))`,
		3*time.Second, "the call in recent calls (tool, agent, outcome, latency)")
	u.waitJS(`![...document.querySelectorAll('#cards pre.args')].some(p => p.textContent.includes("new-invoice.pdf"))`, 2*time.Second, "the accepted card goes")

	// A task typed into the page steers the recommender.
	before := u.eng.Recommender().Stats()
	u.do(chromedp.SendKeys("#task", "list the files in documents"), chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`document.getElementById("task-status").textContent === "Task set."`, 3*time.Second, "the task saved")
	if got := u.eng.Recommender().Task("web"); got != "list the files in documents" {
		t.Fatalf("the recommender's task is %q", got)
	}
	u.waitJS(`document.querySelector('#cards .card[data-tool="list-files"]') !== null`, 3*time.Second, "a list-files card from the task")
	u.do(chromedp.Click(`#cards .card[data-tool="list-files"] button.dismiss`))
	u.waitJS(`document.querySelector('#cards .card[data-tool="list-files"]') === null`, 3*time.Second, "the dismissed card goes")
	deadline := time.Now().Add(3 * time.Second)
	for u.eng.Recommender().Stats().Dismissed != before.Dismissed+1 || u.feedback("list-files", "dismissed") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the recommender did not learn the dismissal: dismissed %d → %d, feedback lines %d",
				before.Dismissed, u.eng.Recommender().Stats().Dismissed, u.feedback("list-files", "dismissed"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(js[string](u, `document.getElementById("live").textContent`), "Dismissed list-files") {
		t.Error("the dismissal was not announced")
	}
}

// An unanswered card expires as "ignored": it leaves the page and the
// recommender records the answer.
func TestBrowserExpiredCardIsIgnored(t *testing.T) {
	u := newUIRig(t, uiOptions{ttl: 1500 * time.Millisecond})
	u.signin("t-web", "web")
	ignored := u.eng.Recommender().Stats().Ignored
	start := u.writePDF("late.pdf", "Late invoice")
	u.waitJS(`document.querySelector('#cards .card[data-tool="pdf-extract"]') !== null`, 2*time.Second-time.Since(start), "the card")
	u.waitJS(`document.querySelector('#cards .card[data-tool="pdf-extract"]') === null`, 5*time.Second, "the card expires")
	if got := u.eng.Recommender().Stats().Ignored; got <= ignored {
		t.Fatalf("ignored %d → %d", ignored, got)
	}
	if u.feedback("pdf-extract", "ignored") == 0 {
		t.Fatal("feedback.jsonl has no ignored pdf-extract")
	}
	if live := js[string](u, `document.getElementById("live").textContent`); !strings.Contains(live, "expired") {
		t.Errorf("the expiry was not announced: %q", live)
	}
	if u.auditHas("pdf-extract", "web", "ok") {
		t.Fatal("an expired card ran")
	}
}

// A destructive tool asks in the page (a dialog, keyboard
// driven): Escape and Cancel run nothing; Run runs it.
func TestBrowserConfirmNotIdempotent(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	u.signin("t-web", "web")
	u.do(chromedp.SendKeys("#task", "delete the note notes/todo.txt"), chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`document.querySelector('#cards .card[data-tool="delete-note"]') !== null`, 3*time.Second, "a delete-note card from the task")
	card := `#cards .card[data-tool="delete-note"]`
	if !strings.Contains(js[string](u, `document.querySelector(`+quote(card)+`).textContent`), "Destructive") {
		t.Error("the card does not say the tool is destructive")
	}
	todo := filepath.Join(u.notes, "todo.txt")
	notRun := func(when string) {
		t.Helper()
		if _, err := os.Stat(todo); err != nil {
			t.Fatalf("%s: the note is gone: %v", when, err)
		}
		if u.auditHas("delete-note", "web", "ok") || u.auditHas("delete-note", "web", "error") {
			t.Fatalf("%s: the audit log has a delete-note call", when)
		}
		if u.cardCount("delete-note") != 1 {
			t.Fatalf("%s: the card is gone", when)
		}
	}
	dialogOpen := `document.getElementById("confirm").open`

	// Keyboard: Enter on Accept opens the dialog with the focus on Cancel;
	// Escape closes it and the focus comes back.
	u.do(chromedp.Focus(card+" button.accept"), chromedp.KeyEvent(kb.Enter))
	u.waitJS(dialogOpen, 2*time.Second, "the confirm dialog opens")
	if id := js[string](u, `document.activeElement.id`); id != "confirm-cancel" {
		t.Errorf("focus in the dialog on %q, want confirm-cancel", id)
	}
	if txt := js[string](u, `document.getElementById("confirm-args").textContent`); !strings.Contains(txt, "notes/todo.txt") {
		t.Errorf("the dialog does not show the arguments: %q", txt)
	}
	u.do(chromedp.KeyEvent(kb.Escape))
	u.waitJS("!"+dialogOpen, 2*time.Second, "Escape closes the dialog")
	time.Sleep(300 * time.Millisecond)
	notRun("after Escape")
	if !strings.Contains(js[string](u, `document.getElementById("live").textContent`), "Not run: delete-note") {
		t.Error("declining was not announced")
	}
	if !js[bool](u, `document.activeElement === document.querySelector(`+quote(card+" button.accept")+`)`) {
		t.Error("the focus did not come back to Accept")
	}

	// Mouse: Cancel declines too.
	u.do(chromedp.Click(card + " button.accept"))
	u.waitJS(dialogOpen, 2*time.Second, "the dialog again")
	u.do(chromedp.Click("#confirm-cancel"))
	u.waitJS("!"+dialogOpen, 2*time.Second, "Cancel closes the dialog")
	time.Sleep(300 * time.Millisecond)
	notRun("after Cancel")

	// Tab to "Run it", Enter: it runs, once.
	u.do(chromedp.Focus(card+" button.accept"), chromedp.KeyEvent(kb.Enter))
	u.waitJS(dialogOpen, 2*time.Second, "the dialog a third time")
	u.do(chromedp.KeyEvent(kb.Tab))
	if id := js[string](u, `document.activeElement.id`); id != "confirm-run" {
		t.Fatalf("Tab from Cancel reached %q", id)
	}
	u.do(chromedp.KeyEvent(kb.Enter))
	u.waitJS(`[...document.querySelectorAll('#results li[data-tool="delete-note"]')].some(li => li.dataset.outcome === "ok" && li.textContent.includes("deleted"))`,
		5*time.Second, "the confirmed call's result")
	if _, err := os.Stat(todo); !os.IsNotExist(err) {
		t.Fatalf("confirmed, the note is still there: %v", err)
	}
	if !u.auditHas("delete-note", "web", "ok") {
		t.Fatal("the audit log has no delete-note call")
	}
}

// Without a session only the sign-in form is reachable; the page's
// requests need the CSRF token and follow the API's 401/403 rules; an
// agent sees only its own.
func TestBrowserAccessRules(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	for _, p := range []string{"/", "/ui/static/app.js", "/ui/api/session"} {
		u.do(chromedp.Navigate(u.base + p))
		loc := js[string](u, `location.pathname`)
		body := js[string](u, `document.body ? document.body.innerText : ""`)
		if p == "/ui/api/session" {
			if !strings.Contains(body, `"unauthorized"`) {
				t.Errorf("GET %s without a session shows %q", p, body)
			}
			continue
		}
		if loc != "/ui/signin" || !js[bool](u, `document.querySelector('form[action="/ui/signin"] input[type=password]') !== null`) {
			t.Errorf("GET %s without a session ended at %s", p, loc)
		}
	}
	fetchStatus := func(method, path, body string, withCSRF bool) int {
		t.Helper()
		return js[int](u, `(async () => {
			let csrf = "";
			if (`+fmt.Sprint(withCSRF)+`) { const s = await fetch("/ui/api/session"); if (s.ok) csrf = (await s.json()).csrf; }
			const h = {"Content-Type": "application/json"};
			if (csrf) h["X-CSRF-Token"] = csrf;
			const r = await fetch(`+quote(path)+`, {method: `+quote(method)+`, headers: h, body: `+quote(body)+` || undefined});
			return r.status;
		})()`)
	}
	for _, r := range [][3]string{{"GET", "/ui/api/events", ""}, {"PUT", "/ui/api/context", `{"task":"x"}`},
		{"POST", "/ui/api/recommendations/x/dismiss", ""}, {"POST", "/ui/api/call", `{"tool":"list-files","arguments":{}}`}} {
		if code := fetchStatus(r[0], r[1], r[2], false); code != 401 {
			t.Errorf("%s %s without a session: %d, want 401", r[0], r[1], code)
		}
	}

	u.signin("t-web", "web")
	if js[bool](u, `document.cookie.includes("airs_session")`) {
		t.Error("the session cookie is readable from script (want HttpOnly)")
	}
	if code := fetchStatus("PUT", "/ui/api/context", `{"task":"no token"}`, false); code != 403 {
		t.Errorf("a change without the CSRF token: %d, want 403", code)
	}
	if u.eng.Recommender().Task("web") == "no token" {
		t.Fatal("the refused change went through")
	}
	if code := fetchStatus("PUT", "/ui/api/context", `{"task":"with the token"}`, true); code != 200 {
		t.Errorf("a change with the token: %d", code)
	}
	webBreakers := js[[]string](u, `[...document.querySelectorAll("#breakers li")].map(li => li.dataset.tool)`)
	if !slices.Contains(webBreakers, "pdf-extract") {
		t.Errorf("web's breakers lack pdf-extract: %v", webBreakers)
	}
	if note := js[string](u, `document.getElementById("review-note").textContent`); !strings.Contains(note, "guard is off") {
		t.Errorf("the review queue without a guard says %q", note)
	}
	if code := fetchStatus("POST", "/ui/api/call", `{"tool":"list-files","arguments":{"space":"documents"}}`, true); code != 200 {
		t.Errorf("web calls list-files from the page: %d", code)
	}
	u.waitJS(`[...document.querySelectorAll("#calls tr")].some(tr => tr.cells[1].textContent === "web")`, 3*time.Second, "web's call in its recent calls")
	start := u.writePDF("for-web.pdf", "Only for web")
	u.waitJS(`document.querySelector('#cards .card[data-tool="pdf-extract"]') !== null`, 2*time.Second-time.Since(start), "web's card")

	// Sign out: the session is gone; sign in as nobody, who may read no space.
	u.do(chromedp.Click("#signout"))
	u.waitJS(`location.pathname === "/ui/signin"`, 3*time.Second, "signed out")
	u.do(chromedp.Navigate(u.base + "/"))
	if loc := js[string](u, `location.pathname`); loc != "/ui/signin" {
		t.Fatalf("after sign-out / shows %s", loc)
	}
	u.signin("t-nobody", "nobody")
	time.Sleep(500 * time.Millisecond)
	if c := u.cards(); len(c) != 0 {
		t.Fatalf("nobody sees web's cards: %v", c)
	}
	nb := js[[]string](u, `[...document.querySelectorAll("#breakers li")].map(li => li.dataset.tool)`)
	if slices.Contains(nb, "pdf-extract") || slices.Contains(nb, "list-files") {
		t.Errorf("nobody sees the breakers of tools it may not call: %v", nb)
	}
	if code := fetchStatus("POST", "/ui/api/call", `{"tool":"list-files","arguments":{"space":"documents"}}`, true); code != 403 {
		t.Errorf("nobody calls list-files on documents from the page: %d, want 403", code)
	}
	if code := fetchStatus("PUT", "/ui/api/context", `{"files":[{"space":"documents","path":"for-web.pdf"}]}`, true); code != 403 {
		t.Errorf("nobody touches a file of documents from the page: %d, want 403", code)
	}
	// Its own refused calls are its recent calls; web's never are.
	u.waitJS(`document.querySelectorAll("#calls tr").length >= 1`, 3*time.Second, "nobody's own (refused) call in recent calls")
	if agents := js[[]string](u, `[...document.querySelectorAll("#calls tr")].map(tr => tr.cells[1].textContent)`); slices.Contains(agents, "web") {
		t.Errorf("nobody sees web's calls: %v", agents)
	}
}

// Keyboard-only use (Tab reaches the cards' buttons in order, with a
// visible focus; Enter dismisses and the focus moves on), and the layout at
// 375 px and 1280 px, with screenshots.
func TestBrowserKeyboardAndLayout(t *testing.T) {
	u := newUIRig(t, uiOptions{})
	u.signin("t-web", "web")
	// Some history: two calls from the page, then three PDFs → three cards.
	for _, body := range []string{`{"tool":"list-files","arguments":{"space":"documents"}}`, `{"tool":"calculator","arguments":{"expression":"(12.5 + 7) * 3"}}`} {
		code := js[int](u, `(async () => {
			const s = await (await fetch("/ui/api/session")).json();
			const r = await fetch("/ui/api/call", {method: "POST", headers: {"Content-Type": "application/json", "X-CSRF-Token": s.csrf}, body: `+quote(body)+`});
			return r.status; })()`)
		if code != 200 {
			t.Fatalf("call %s: %d", body, code)
		}
	}
	u.writePDF("quote-2026.pdf", "Quote 2026", "Basic plan $14 per month")
	u.writePDF("minutes.pdf", "Meeting minutes", "Ship the attention UI")
	u.writePDF("acme-2026.pdf", "ACME quote 2026", "Pro plan $32 per month")
	u.waitJS(`document.querySelectorAll('#cards .card').length >= 3`, 3*time.Second, "three cards")
	u.waitJS(`document.querySelectorAll('#calls tr').length >= 2`, 3*time.Second, "two recent calls")

	// Tab from the top of a fresh load.
	u.do(chromedp.Reload(), chromedp.WaitVisible("#agent"))
	u.waitJS(`document.querySelectorAll('#cards .card').length >= 3`, 3*time.Second, "the cards after a reload (snapshot)")
	want := js[[]string](u, `[...document.querySelectorAll("#cards .card button")].map(b => b.closest(".card").dataset.id + " " + b.className.split(" ")[0])`)
	var got []string
	for range len(want) + 4 {
		u.do(chromedp.KeyEvent(kb.Tab))
		got = append(got, js[string](u, `(() => { const a = document.activeElement; const c = a && a.closest(".card");
			return c ? c.dataset.id + " " + a.className.split(" ")[0] : (a.id || a.className || a.tagName); })()`))
		if strings.HasSuffix(got[len(got)-1], " accept") {
			if style := js[string](u, `getComputedStyle(document.activeElement).outlineStyle`); style == "none" {
				t.Errorf("a focused button shows no outline")
			}
		}
	}
	var onCards []string
	for _, g := range got {
		if strings.HasSuffix(g, " accept") || strings.HasSuffix(g, " dismiss") {
			onCards = append(onCards, g)
		}
	}
	if !slices.Equal(onCards, want) {
		t.Fatalf("Tab order on the cards %v, want %v (all stops: %v)", onCards, want, got)
	}
	if got[0] != "skip" {
		t.Errorf("the first Tab stop is %q, want the skip link", got[0])
	}
	// Enter on the first card's Accept runs it (idempotent); the result
	// takes the focus.
	first, second, third := strings.Fields(want[0])[0], strings.Fields(want[2])[0], strings.Fields(want[4])[0]
	u.do(chromedp.Focus(`#cards .card[data-id="`+first+`"] button.accept`), chromedp.KeyEvent(kb.Enter))
	u.waitJS(`document.querySelectorAll('#results li').length === 1 && document.activeElement === document.querySelector('#results li')`, 5*time.Second, "Enter accepted: the result, focused")
	u.waitJS(`document.querySelector('#cards .card[data-id="`+first+`"]') === null`, 3*time.Second, "the accepted card goes")
	u.waitJS(`document.querySelectorAll('#calls tr').length >= 3`, 3*time.Second, "three recent calls")
	u.do(chromedp.SendKeys("#task", "summarize the meeting minutes"), chromedp.Click(`#task-form button[type="submit"]`))
	u.waitJS(`document.getElementById("task-status").textContent === "Task set."`, 3*time.Second, "the task saved")
	time.Sleep(500 * time.Millisecond)
	js[bool](u, `(document.activeElement && document.activeElement.blur(), true)`) // a calm picture

	dir := artifacts(t)
	for _, w := range []int64{375, 1280} {
		u.do(chromedp.EmulateViewport(w, 900))
		time.Sleep(200 * time.Millisecond)
		if over := js[int](u, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
			t.Errorf("at %d px the page is %d px wider than the window", w, over)
		}
		side := js[bool](u, `(() => { const m = document.querySelector(".col-main").getBoundingClientRect(), s = document.querySelector(".col-side").getBoundingClientRect();
			return s.left >= m.right - 1 && s.top < m.bottom; })()`)
		if w == 1280 && !side {
			t.Errorf("at 1280 px the side column is not beside the suggestions")
		}
		if w == 375 && side {
			t.Errorf("at 375 px the columns do not stack")
		}
		if w == 375 {
			if bad := js[int](u, `[...document.querySelectorAll("#cards .card button")].filter(b => b.getBoundingClientRect().right > window.innerWidth || b.getBoundingClientRect().height < 32).length`); bad > 0 {
				t.Errorf("at 375 px %d card buttons are cut off or too small to tap", bad)
			}
		}
		ctx, cancel := context.WithTimeout(u.ctx, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("attention-%d.png", w))
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %d px: %s (%d KB)", w, p, len(png)/1024)
	}
	// Enter on a card's Dismiss removes it; the focus goes to the next card.
	u.do(chromedp.EmulateViewport(1280, 900))
	u.do(chromedp.Focus(`#cards .card[data-id="` + second + `"] button.dismiss`))
	u.do(chromedp.KeyEvent(kb.Enter))
	u.waitJS(`document.querySelector('#cards .card[data-id="`+second+`"]') === null`, 3*time.Second, "Enter dismissed the card")
	if !js[bool](u, `document.activeElement === document.querySelector('#cards .card[data-id="`+third+`"] button.accept')`) {
		t.Errorf("after the dismissal the focus is on %q", js[string](u, `document.activeElement.outerHTML.slice(0, 80)`))
	}
}

// The event stream ends (here: the request's time is up every 1.5 s, as a
// cut-off page's would) and the page reconnects, starts from a snapshot and
// goes on: no card lost, none twice.
func TestBrowserStreamReconnects(t *testing.T) {
	u := newUIRig(t, uiOptions{timeout: 1500 * time.Millisecond})
	var opened atomic.Int64 // the page's requests for its event stream
	if err := chromedp.Listen(u.ctx, func(ev any) {
		if r, ok := ev.(*network.EventRequestWillBeSent); ok && strings.HasSuffix(r.Request.URL, "/ui/api/events") {
			opened.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	u.signin("t-web", "web")
	u.writePDF("before.pdf", "Before")
	u.waitJS(`document.querySelectorAll('#cards .card').length === 1`, 2*time.Second, "the first card")
	time.Sleep(5 * time.Second) // two reconnects at least (1.5 s a stream, then retry: 1000)
	if streams := opened.Load(); streams < 3 {
		t.Fatalf("%d event streams opened in over 5 s with a 1.5 s request time: the page did not reconnect", streams)
	}
	u.waitJS(`document.getElementById("conn").textContent === "live"`, 3*time.Second, "live again")
	start := u.writePDF("after.pdf", "After")
	u.waitJS(`[...document.querySelectorAll('#cards pre.args')].some(p => p.textContent.includes("after.pdf"))`, 2*time.Second-time.Since(start)+1500*time.Millisecond,
		"a card after the reconnects")
	if got := u.cards(); len(got) != 2 {
		t.Fatalf("cards after the reconnects: %v, want the two, once each", got)
	}
	t.Logf("%d event streams in the test", opened.Load())
}

// The review queue: another agent's held call shows up in a reviewer's
// page with its arguments; "Allow once" lets that call through (sent
// again, it runs), "Deny" refuses the next; a destructive suggestion the
// reviewer confirms in the page runs at once where guard.self_approve lets
// her confirmation be the guard's answer (by default another reviewer
// approves it). Every decision is in the audit log.
func TestBrowserReviewQueue(t *testing.T) {
	u := newUIRig(t, uiOptions{guard: true, selfApprove: true})
	u.signin("t-web", "web")
	u.waitJS(`document.getElementById("review-note").textContent.startsWith("You review")`, 3*time.Second, "the page says web reviews")
	call := func(path string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest("POST", u.base+"/v1/call", strings.NewReader(`{"tool":"delete-note","arguments":{"path":"`+path+`"}}`))
		req.Header.Set("Authorization", "Bearer t-nobody")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v map[string]any
		json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	todo := filepath.Join(u.notes, "todo.txt")
	if code, v := call("todo.txt"); code != 428 || v["confirmation"] == nil {
		t.Fatalf("nobody's delete: %d %v", code, v)
	}
	item := `#reviews li[data-tool="delete-note"]`
	u.waitJS(`[...document.querySelectorAll(`+quote(item)+`)].some(li => li.textContent.includes("nobody → delete-note") && li.textContent.includes("todo.txt"))`,
		7*time.Second, "the held call in the review queue")
	if _, err := os.Stat(todo); err != nil {
		t.Fatal("a held call deleted the note")
	}
	u.do(chromedp.Click(item + " button.approve"))
	u.waitJS(`document.querySelectorAll(`+quote(item)+`).length === 0`, 3*time.Second, "the approved call leaves the queue")
	if code, v := call("todo.txt"); code != 200 {
		t.Fatalf("the approved call: %d %v", code, v)
	}
	if _, err := os.Stat(todo); !os.IsNotExist(err) {
		t.Fatalf("approved, the note is still there: %v", err)
	}

	os.WriteFile(filepath.Join(u.notes, "keep.txt"), []byte("keep"), 0o644)
	call("keep.txt")
	u.waitJS(`document.querySelectorAll(`+quote(item)+`).length === 1`, 7*time.Second, "the second held call")
	u.do(chromedp.Click(item + " button.deny"))
	u.waitJS(`document.querySelectorAll(`+quote(item)+`).length === 0`, 3*time.Second, "the denied call leaves the queue")
	if code, v := call("keep.txt"); code != 403 || v["error"] != "intent_misaligned" {
		t.Fatalf("the denied call: %d %v", code, v)
	}
	if _, err := os.Stat(filepath.Join(u.notes, "keep.txt")); err != nil {
		t.Fatal("a denied call deleted the note")
	}

	// The reviewer's own destructive suggestion: confirmed in the page, it runs.
	os.WriteFile(todo, []byte("again\n"), 0o644)
	u.do(chromedp.SendKeys("#task", "delete the note notes/todo.txt"), chromedp.Click(`#task-form button[type="submit"]`))
	card := `#cards .card[data-tool="delete-note"]`
	u.waitJS(`document.querySelector(`+quote(card)+`) !== null`, 3*time.Second, "a delete-note card")
	u.do(chromedp.Click(card + " button.accept"))
	u.waitJS(`document.getElementById("confirm").open`, 2*time.Second, "the confirm dialog")
	u.do(chromedp.Click("#confirm-run"))
	u.waitJS(`[...document.querySelectorAll('#results li[data-tool="delete-note"]')].some(li => li.dataset.outcome === "ok")`, 5*time.Second, "the confirmed suggestion ran")
	if _, err := os.Stat(todo); !os.IsNotExist(err) {
		t.Fatalf("confirmed in the page, the note is still there: %v", err)
	}
	var decisions []string
	b, _ := os.ReadFile(u.cfg.AuditPath())
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r audit.Record
		if json.Unmarshal([]byte(line), &r) == nil && r.Tool == "delete-note" {
			decisions = append(decisions, r.Caller+":"+r.Intent+":"+r.Reviewer)
		}
	}
	want := "nobody:required: nobody:approved:http:web nobody:required: nobody:denied:http:web web:required: web:approved:http:web"
	if got := strings.Join(decisions, " "); got != want {
		t.Errorf("audited decisions\n got %s\nwant %s", got, want)
	}
}
