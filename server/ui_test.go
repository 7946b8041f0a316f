package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// uiBackend is testBackend with an in-memory recommender, enough to drive
// the UI's endpoints.
type uiBackend struct {
	*testBackend
	mu        sync.Mutex
	recs      []recommender.Recommendation
	subs      map[chan recommender.Update]string
	dismissed []string
	tasks     map[string]string
}

func newUIBackend(m *pipeline.Manager) *uiBackend {
	return &uiBackend{testBackend: &testBackend{m}, subs: map[chan recommender.Update]string{}, tasks: map[string]string{}}
}

func (b *uiBackend) Recommendations(caller string) []recommender.Recommendation {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []recommender.Recommendation
	for _, r := range b.recs {
		if r.Caller == caller {
			out = append(out, r)
		}
	}
	return out
}

func (b *uiBackend) SubscribeRecommendations(caller string) (<-chan recommender.Update, func()) {
	ch := make(chan recommender.Update, 4)
	b.mu.Lock()
	b.subs[ch] = caller
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			if _, ok := b.subs[ch]; ok {
				delete(b.subs, ch)
				close(ch)
			}
			b.mu.Unlock()
		})
	}
}

// add makes a recommendation live and tells the subscribers; a subscriber
// whose buffer is full is cut off, as the recommender does.
func (b *uiBackend) add(r recommender.Recommendation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recs = append(b.recs, r)
	for ch, c := range b.subs {
		if c != r.Caller {
			continue
		}
		cp := r
		select {
		case ch <- recommender.Update{Type: "new", Recommendation: &cp}:
		default:
			delete(b.subs, ch)
			close(ch)
		}
	}
}

func (b *uiBackend) take(caller, id string) (*recommender.Recommendation, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.IndexFunc(b.recs, func(r recommender.Recommendation) bool { return r.ID == id && r.Caller == caller })
	if i < 0 {
		return nil, recommender.ErrNotFound
	}
	r := b.recs[i]
	b.recs = slices.Delete(b.recs, i, i+1)
	return &r, nil
}

func (b *uiBackend) AcceptRecommendation(ctx context.Context, caller, id string) (*recommender.Recommendation, *pipeline.Result, error, error) {
	r, err := b.take(caller, id)
	if err != nil {
		return nil, nil, nil, err
	}
	if r.Destructive {
		return r, nil, nil, nil
	}
	res, callErr := b.Call(ctx, pipeline.Request{Tool: r.Tool, Params: r.Arguments, Caller: caller})
	return r, res, callErr, nil
}

func (b *uiBackend) DismissRecommendation(caller, id string) error {
	if _, err := b.take(caller, id); err != nil {
		return err
	}
	b.mu.Lock()
	b.dismissed = append(b.dismissed, id)
	b.mu.Unlock()
	return nil
}

func (b *uiBackend) SetContext(ctx context.Context, caller string, c ContextUpdate) error {
	if c.Task != nil {
		b.mu.Lock()
		b.tasks[caller] = *c.Task
		b.mu.Unlock()
	}
	return nil
}

func (b *uiBackend) SubscribeCalls(buffer int) *pipeline.Subscription { return b.m.Subscribe(buffer) }
func (b *uiBackend) Breakers(caller string) []pipeline.ToolBreaker    { return b.m.Breakers() }
func (b *uiBackend) Task(caller string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tasks[caller]
}

// uiRig is a server over uiBackend, with alice (who may read the vault)
// and bob (who may not).
type uiRig struct {
	t    *testing.T
	srv  *Server
	ts   *httptest.Server
	back *uiBackend
	m    *pipeline.Manager
	// guardDir is the guard's store (newReviewRig).
	guardDir string
}

func newUIRig(t *testing.T, mod func(*pipeline.Config)) *uiRig {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	for _, tl := range []pipeline.Tool{
		{Name: "echo", Version: "1", Parameters: json.RawMessage(schema), Idempotent: true, LatencyClass: pipeline.Fast},
		{Name: "erase", Version: "1", Parameters: json.RawMessage(schema), Idempotent: false, Destructive: true, LatencyClass: pipeline.Fast},
		{Name: "secret", Version: "1", Parameters: json.RawMessage(`{"type":"object"}`), Idempotent: true, LatencyClass: pipeline.Fast,
			CapabilityRequired: []pipeline.Capability{{Kind: "ReadSpace", Arg: "vault"}}},
	} {
		if err := reg.Register("test", tl, echo); err != nil {
			t.Fatal(err)
		}
	}
	mc := pipeline.Config{Registry: reg, Policy: &pipeline.StaticPolicy{
		Channels:     map[string][]string{"*": {"*"}},
		Capabilities: map[string][]pipeline.Capability{"alice": {{Kind: "ReadSpace", Arg: "vault"}}},
	}}
	if mod != nil {
		mod(&mc)
	}
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	b := newUIBackend(m)
	s := New(b, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}}, MaxBody: 4096})
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		s.hub.stop()
		m.Close()
	})
	return &uiRig{t: t, srv: s, ts: ts, back: b, m: m}
}

// noRedirect is a client that shows redirects instead of following them.
func noRedirect(jar http.CookieJar) *http.Client {
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signin signs agent in and returns a client with its cookie, the cookie
// and the CSRF token.
func (u *uiRig) signin(token string) (*http.Client, *http.Cookie, string) {
	u.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := noRedirect(jar)
	resp, err := c.PostForm(u.ts.URL+"/ui/signin", url.Values{"token": {token}})
	if err != nil {
		u.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		u.t.Fatalf("sign-in: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	var ck *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == uiCookie {
			ck = k
		}
	}
	if ck == nil {
		u.t.Fatal("sign-in set no session cookie")
	}
	code, v := u.do(c, "GET", "/ui/api/session", "", "", nil)
	if code != 200 || v["csrf"] == "" {
		u.t.Fatalf("session: %d %v", code, v)
	}
	return c, ck, v["csrf"].(string)
}

// do sends a request and decodes a JSON answer (nil when it is not JSON).
func (u *uiRig) do(c *http.Client, method, path, csrf, body string, hdr map[string]string) (int, map[string]any) {
	u.t.Helper()
	resp := u.raw(c, method, path, csrf, body, hdr)
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

func (u *uiRig) raw(c *http.Client, method, path, csrf, body string, hdr map[string]string) *http.Response {
	u.t.Helper()
	req, _ := http.NewRequest(method, u.ts.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if csrf != "" {
		req.Header.Set(uiCSRFHeader, csrf)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	return resp
}

func wantHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	if got := h.Get("Content-Security-Policy"); got != uiCSP {
		t.Errorf("%s: CSP %q", what, got)
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s %q, want %q", what, k, got, want)
		}
	}
}

// The CSP is the strict one the page needs, with nothing inline.
func TestUICSPIsStrict(t *testing.T) {
	for _, d := range []string{"default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
		"connect-src 'self'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'"} {
		if !strings.Contains(uiCSP, d) {
			t.Errorf("CSP lacks %q", d)
		}
	}
	if strings.Contains(uiCSP, "unsafe") {
		t.Errorf("CSP allows something unsafe: %s", uiCSP)
	}
	// No inline script or style in the page or the form, no inline handler.
	for _, f := range []string{"ui/index.html", "ui/signin.html"} {
		b, err := uiFiles.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "<script>") || strings.Contains(s, "<style") || strings.Contains(s, " style=") || strings.Contains(s, " onclick") || strings.Contains(s, "javascript:") {
			t.Errorf("%s has inline script or style", f)
		}
	}
}

// Without a session only the sign-in form and its style sheet are served:
// pages and the script redirect to the form, the page's API answers 401 in
// JSON. Every answer has the security headers.
func TestUIUnauthenticatedSeesOnlySignin(t *testing.T) {
	u := newUIRig(t, nil)
	c := noRedirect(nil)
	for _, p := range []string{"/", "/ui/static/app.js"} {
		resp := u.raw(c, "GET", p, "", "", nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/signin" {
			t.Errorf("GET %s: %d → %q, want 303 → /ui/signin", p, resp.StatusCode, resp.Header.Get("Location"))
		}
		wantHeaders(t, p, resp.Header)
	}
	for _, p := range []string{"/ui/api/session", "/ui/api/events"} {
		code, v := u.do(c, "GET", p, "", "", nil)
		if code != 401 || v["error"] != "unauthorized" {
			t.Errorf("GET %s: %d %v", p, code, v)
		}
	}
	for _, r := range [][2]string{{"POST", "/ui/api/recommendations/x/accept"}, {"POST", "/ui/api/recommendations/x/dismiss"},
		{"PUT", "/ui/api/context"}, {"POST", "/ui/api/call"}, {"POST", "/ui/api/signout"}} {
		code, v := u.do(c, r[0], r[1], "any", `{}`, nil)
		if code != 401 || v["error"] != "unauthorized" {
			t.Errorf("%s %s: %d %v", r[0], r[1], code, v)
		}
	}
	// A bearer token is no session: the page's API is for the page.
	code, _ := u.do(c, "GET", "/ui/api/session", "", "", map[string]string{"Authorization": "Bearer tok-alice"})
	if code != 401 {
		t.Errorf("bearer on the page's API: %d", code)
	}
	resp := u.raw(c, "GET", "/ui/signin", "", "", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `<form method="post" action="/ui/signin"`) {
		t.Fatalf("sign-in form: %d %s", resp.StatusCode, b)
	}
	wantHeaders(t, "/ui/signin", resp.Header)
	resp = u.raw(c, "GET", "/ui/static/ui.css", "", "", nil)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/css") {
		t.Errorf("style sheet: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	// A made-up cookie is no session, and is cleared.
	req, _ := http.NewRequest("GET", u.ts.URL+"/", nil)
	req.AddCookie(&http.Cookie{Name: uiCookie, Value: "forged"})
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("forged cookie: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	// The API's other paths are untouched: an unknown one is still a JSON 404.
	code, v := u.do(c, "GET", "/nope", "", "", nil)
	if code != 404 || v["error"] != "not_found" {
		t.Errorf("GET /nope: %d %v", code, v)
	}
}

func TestUISignin(t *testing.T) {
	u := newUIRig(t, nil)
	c := noRedirect(nil)
	form := func(q, token string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest("POST", u.ts.URL+"/ui/signin"+q, strings.NewReader(url.Values{"token": {token}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if r := form("", "wrong", nil); r.StatusCode != 401 || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("wrong token: %d %q", r.StatusCode, r.Header.Get("Set-Cookie"))
	}
	if r := form("?token=tok-alice", "tok-alice", nil); r.StatusCode != 400 || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("token in the URL: %d", r.StatusCode)
	}
	if r := form("", "tok-alice", map[string]string{"Origin": "http://evil.example"}); r.StatusCode != 403 || r.Header.Get("Set-Cookie") != "" {
		t.Errorf("sign-in from another origin: %d", r.StatusCode)
	}
	if r := form("", "tok-alice", map[string]string{"Sec-Fetch-Site": "cross-site"}); r.StatusCode != 403 {
		t.Errorf("sign-in from another site: %d", r.StatusCode)
	}
	r := form("", "tok-alice", map[string]string{"Origin": u.ts.URL, "Sec-Fetch-Site": "same-origin"})
	if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	sc := r.Header.Get("Set-Cookie")
	for _, want := range []string{uiCookie + "=", "Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=86400"} {
		if !strings.Contains(sc, want) {
			t.Errorf("cookie %q lacks %q", sc, want)
		}
	}
	if strings.Contains(sc, "Secure") {
		t.Errorf("a cookie over plain http is not Secure: %q", sc)
	}

	_, ck, csrf := u.signin("tok-alice")
	if len(ck.Value) < 40 || len(csrf) < 40 || ck.Value == csrf {
		t.Errorf("session id %q, csrf %q: want two distinct 256-bit random values", ck.Value, csrf)
	}
	// The page, once signed in, with its headers; the form sends a
	// signed-in browser to the page.
	jar, _ := cookiejar.New(nil)
	uu, _ := url.Parse(u.ts.URL)
	jar.SetCookies(uu, []*http.Cookie{ck})
	c2 := noRedirect(jar)
	resp := u.raw(c2, "GET", "/", "", "", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `aria-live="polite"`) || !strings.Contains(string(b), `src="/ui/static/app.js"`) {
		t.Fatalf("page: %d", resp.StatusCode)
	}
	wantHeaders(t, "/", resp.Header)
	resp = u.raw(c2, "GET", "/ui/signin", "", "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Errorf("sign-in form when signed in: %d", resp.StatusCode)
	}
	code, v := u.do(c2, "GET", "/ui/api/session", "", "", nil)
	if code != 200 || v["agent"] != "alice" || v["csrf"] != csrf {
		t.Errorf("session: %d %v", code, v)
	}
}

// Over TLS the cookie is Secure.
func TestUISigninTLSCookieIsSecure(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	m, _ := pipeline.NewManager(pipeline.Config{Registry: reg})
	s := New(newUIBackend(m), Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}}})
	ts := httptest.NewTLSServer(s)
	defer func() { ts.Close(); s.hub.stop(); m.Close() }()
	c := ts.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
	resp, err := c.PostForm(ts.URL+"/ui/signin", url.Values{"token": {"tok-alice"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sc := resp.Header.Get("Set-Cookie"); resp.StatusCode != 303 || !strings.Contains(sc, "Secure") || !strings.Contains(sc, "HttpOnly") {
		t.Fatalf("TLS sign-in: %d %q", resp.StatusCode, sc)
	}
}

// Every change from the page needs the session's CSRF token, and a browser
// that says the request comes from elsewhere is refused even with it.
func TestUICSRF(t *testing.T) {
	u := newUIRig(t, nil)
	c, _, csrf := u.signin("tok-alice")
	u.back.add(recommender.Recommendation{ID: "r1", Caller: "alice", Tool: "echo", Arguments: json.RawMessage(`{"n":1}`), Idempotent: true})
	changes := [][3]string{{"POST", "/ui/api/recommendations/r1/dismiss", ""}, {"POST", "/ui/api/recommendations/r1/accept", `{}`},
		{"PUT", "/ui/api/context", `{"task":"x"}`}, {"POST", "/ui/api/call", `{"tool":"echo","arguments":{"n":1}}`}, {"POST", "/ui/api/signout", ""}}
	for _, ch := range changes {
		for name, tc := range map[string]struct {
			tok string
			hdr map[string]string
		}{
			"no token":         {"", nil},
			"wrong token":      {csrf[:len(csrf)-1] + "x", nil},
			"cross-site":       {csrf, map[string]string{"Sec-Fetch-Site": "cross-site"}},
			"same-site":        {csrf, map[string]string{"Sec-Fetch-Site": "same-site"}},
			"other origin":     {csrf, map[string]string{"Origin": "http://evil.example"}},
			"null, cross-site": {csrf, map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site"}},
			"another session":  {"", map[string]string{uiCSRFHeader: "not-" + csrf}},
			"token in a query": {"", nil},
		} {
			path := ch[1]
			if name == "token in a query" {
				path += "?csrf=" + csrf
			}
			code, v := u.do(c, ch[0], path, tc.tok, ch[2], tc.hdr)
			if code != 403 || v["error"] != "csrf" {
				t.Errorf("%s %s, %s: %d %v, want 403 csrf", ch[0], ch[1], name, code, v)
			}
		}
	}
	if u.back.Task("alice") != "" || len(u.back.dismissed) != 0 || len(u.back.Recommendations("alice")) != 1 {
		t.Fatal("a refused change changed something")
	}
	// With the token (and the headers a browser sends for the page's own
	// requests under Referrer-Policy: no-referrer) it works.
	hdr := map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}
	if code, v := u.do(c, "PUT", "/ui/api/context", csrf, `{"task":"compare the quotes"}`, hdr); code != 200 || u.back.Task("alice") != "compare the quotes" {
		t.Fatalf("task: %d %v", code, v)
	}
	if code, v := u.do(c, "POST", "/ui/api/recommendations/r1/dismiss", csrf, "", hdr); code != 200 || v["dismissed"] != "r1" {
		t.Fatalf("dismiss: %d %v", code, v)
	}
	// One session's token is no other's.
	c2, _, csrf2 := u.signin("tok-alice")
	if csrf2 == csrf {
		t.Fatal("two sessions share a CSRF token")
	}
	if code, _ := u.do(c2, "PUT", "/ui/api/context", csrf, `{"task":"y"}`, nil); code != 403 {
		t.Errorf("session 2 with session 1's token: %d", code)
	}
}

// The page's requests follow the API's rules: the session's agent, the
// capability checks (403), the schema (422), the rate limit (429).
func TestUIRequestsFollowTheAPIRules(t *testing.T) {
	u := newUIRig(t, func(c *pipeline.Config) {
		c.RateLimits = map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 3}}
	})
	alice, _, ca := u.signin("tok-alice")
	bob, _, cb := u.signin("tok-bob")
	if code, v := u.do(alice, "POST", "/ui/api/call", ca, `{"tool":"secret","arguments":{}}`, nil); code != 200 || v["outcome"] != "ok" {
		t.Fatalf("alice calls secret: %d %v", code, v)
	}
	if code, v := u.do(bob, "POST", "/ui/api/call", cb, `{"tool":"secret","arguments":{}}`, nil); code != 403 || v["error"] != pipeline.KindToolCapabilityDenied {
		t.Fatalf("bob calls secret: %d %v", code, v)
	}
	if code, v := u.do(bob, "POST", "/ui/api/call", cb, `{"tool":"echo","arguments":{"n":"x"}}`, nil); code != 422 {
		t.Fatalf("bad arguments: %d %v", code, v)
	}
	// Each agent sees and answers its own recommendations only.
	u.back.add(recommender.Recommendation{ID: "ra", Caller: "alice", Tool: "echo", Arguments: json.RawMessage(`{"n":1}`), Idempotent: true})
	if code, v := u.do(bob, "POST", "/ui/api/recommendations/ra/dismiss", cb, "", nil); code != 404 {
		t.Fatalf("bob dismisses alice's: %d %v", code, v)
	}
	// bob's burst (3) is spent by now or within a few more costly requests.
	code := 0
	for range 5 {
		if code, _ = u.do(bob, "PUT", "/ui/api/context", cb, `{"task":"t"}`, nil); code == 429 {
			break
		}
	}
	if code != 429 {
		t.Fatalf("bob over his limit: %d", code)
	}
	if code, _ := u.do(bob, "GET", "/ui/api/events", "", "", nil); code != 429 {
		t.Fatalf("bob's event stream over his limit: %d", code)
	}
	if code, v := u.do(alice, "POST", "/ui/api/recommendations/ra/accept", ca, "", nil); code != 200 || v["ran"] != true {
		t.Fatalf("alice accepts hers: %d %v", code, v)
	}
}

// A destructive tool does not run from the page until the user
// confirmed it: without "confirmed" the answer is 409 and the suggestion
// stays; with it the call runs through the pipeline as the caller.
func TestUIAcceptNeedsConfirmation(t *testing.T) {
	u := newUIRig(t, nil)
	c, _, csrf := u.signin("tok-alice")
	sub := u.m.Subscribe(8)
	defer sub.Close()
	u.back.add(recommender.Recommendation{ID: "e1", Caller: "alice", Tool: "erase", Arguments: json.RawMessage(`{"n":7}`), Idempotent: false, Destructive: true})
	code, v := u.do(c, "POST", "/ui/api/recommendations/e1/accept", csrf, `{}`, nil)
	if code != 409 || v["error"] != "confirmation_required" {
		t.Fatalf("unconfirmed: %d %v", code, v)
	}
	code, _ = u.do(c, "POST", "/ui/api/recommendations/e1/accept", csrf, "", nil)
	if code != 409 || len(u.back.Recommendations("alice")) != 1 || len(sub.C) != 0 {
		t.Fatalf("unconfirmed, empty body: %d; the suggestion must stay and nothing run", code)
	}
	code, v = u.do(c, "POST", "/ui/api/recommendations/e1/accept", csrf, `{"confirmed":true}`, nil)
	if code != 200 || v["ran"] != true {
		t.Fatalf("confirmed: %d %v", code, v)
	}
	ev := <-sub.C
	if ev.Tool != "erase" || ev.Caller != "alice" || string(ev.Params) != `{"n":7}` {
		t.Fatalf("the call that ran: %+v", ev)
	}
	if code, v := u.do(c, "POST", "/ui/api/recommendations/e1/accept", csrf, `{"confirmed":1}`, nil); code != 400 {
		t.Fatalf("a body that is not the accept body: %d %v", code, v)
	}
}

// Sessions end: sign-out deletes it (and clears the cookie), an idle one
// and an old one expire, and there are never more than the bound.
func TestUISessionLifetime(t *testing.T) {
	u := newUIRig(t, nil)
	c, _, csrf := u.signin("tok-alice")
	resp := u.raw(c, "POST", "/ui/api/signout", csrf, "", nil)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("sign-out: %d %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}
	if u.srv.ui.count() != 0 {
		t.Fatalf("sign-out left %d sessions", u.srv.ui.count())
	}
	if code, _ := u.do(c, "GET", "/ui/api/session", "", "", nil); code != 401 {
		t.Fatalf("after sign-out: %d", code)
	}

	now := time.Now()
	var mu sync.Mutex
	u.srv.ui.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	c, _, _ = u.signin("tok-alice")
	advance(uiIdle - time.Minute)
	if code, _ := u.do(c, "GET", "/ui/api/session", "", "", nil); code != 200 {
		t.Fatalf("just under the idle limit: %d", code)
	}
	advance(uiIdle)
	if code, _ := u.do(c, "GET", "/ui/api/session", "", "", nil); code != 401 {
		t.Fatalf("idle past the limit: %d", code)
	}
	c, _, _ = u.signin("tok-alice")
	for range 5 { // kept busy, still ends at the absolute limit
		advance(uiAbsolute / 5)
		u.do(c, "GET", "/ui/api/session", "", "", nil)
	}
	if code, _ := u.do(c, "GET", "/ui/api/session", "", "", nil); code != 401 {
		t.Fatalf("past the absolute limit: %d", code)
	}

	ss := newUISessions(3, time.Hour, 2*time.Hour)
	ids := []string{}
	for range 5 {
		id, _ := ss.create("a")
		ids = append(ids, id)
	}
	if ss.count() != 3 || ss.lookup(ids[0]) != nil || ss.lookup(ids[4]) == nil {
		t.Fatalf("bounded table: %d sessions", ss.count())
	}
}

// sse reads a stream's events.
func sse(body io.Reader) <-chan [2]string {
	out := make(chan [2]string, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		ev := ""
		for sc.Scan() {
			if e, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				ev = e
			}
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- [2]string{ev, d}
			}
		}
	}()
	return out
}

func next(t *testing.T, evs <-chan [2]string) [2]string {
	t.Helper()
	select {
	case e, ok := <-evs:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no event in 5 s")
	}
	return [2]string{}
}

// The page's stream: a snapshot first (recommendations, the agent's recent
// calls, breakers, no guard), then the agent's own updates and calls only.
func TestUIEvents(t *testing.T) {
	u := newUIRig(t, nil)
	c, _, csrf := u.signin("tok-alice")
	bob, _, cb := u.signin("tok-bob")
	u.do(c, "POST", "/ui/api/call", csrf, `{"tool":"echo","arguments":{"n":1}}`, nil)
	u.back.add(recommender.Recommendation{ID: "r1", Caller: "alice", Tool: "echo", Arguments: json.RawMessage(`{"n":2}`), Idempotent: true})
	deadline := time.Now().Add(2 * time.Second)
	for { // the hub sees the call asynchronously
		u.srv.hub.mu.Lock()
		n := 0
		if ac := u.srv.hub.recent["alice"]; ac != nil {
			n = len(ac.calls)
		}
		u.srv.hub.mu.Unlock()
		if n == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp := u.raw(c, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	wantHeaders(t, "events", resp.Header)
	evs := sse(resp.Body)
	e := next(t, evs)
	var snap struct {
		Agent           string                       `json:"agent"`
		Recommendations []recommender.Recommendation `json:"recommendations"`
		Calls           []pipeline.CallEvent         `json:"calls"`
		Breakers        []pipeline.ToolBreaker       `json:"breakers"`
		Guard           *struct{}                    `json:"guard"`
	}
	if e[0] != "snapshot" || json.Unmarshal([]byte(e[1]), &snap) != nil {
		t.Fatalf("first event %v", e)
	}
	if snap.Agent != "alice" || len(snap.Recommendations) != 1 || len(snap.Calls) != 1 || snap.Calls[0].Tool != "echo" || len(snap.Breakers) != 3 || snap.Guard != nil {
		t.Fatalf("snapshot %s", e[1])
	}
	if strings.Contains(e[1], `"params"`) || strings.Contains(e[1], `"Params"`) {
		t.Fatalf("a call's params are never shown: %s", e[1])
	}
	// bob's call is not alice's to see; her own is.
	u.do(bob, "POST", "/ui/api/call", cb, `{"tool":"echo","arguments":{"n":3}}`, nil)
	u.do(c, "POST", "/ui/api/call", csrf, `{"tool":"echo","arguments":{"n":4}}`, nil)
	e = next(t, evs)
	if e[0] != "call" || !strings.Contains(e[1], `"caller":"alice"`) || !strings.Contains(e[1], `"latency_ns"`) {
		t.Fatalf("want alice's call, got %v", e)
	}
	u.back.add(recommender.Recommendation{ID: "r2", Caller: "alice", Tool: "echo", Arguments: json.RawMessage(`{"n":5}`), Idempotent: true})
	u.back.add(recommender.Recommendation{ID: "b1", Caller: "bob", Tool: "echo", Arguments: json.RawMessage(`{"n":5}`), Idempotent: true})
	e = next(t, evs)
	if e[0] != "new" || !strings.Contains(e[1], `"id":"r2"`) {
		t.Fatalf("want r2, got %v", e)
	}
}

// A page that stops reading is cut off: its call buffer fills, its channel
// closes, the others go on; its stream ends, and a new one starts from a
// snapshot.
func TestUIStalledClientCutOff(t *testing.T) {
	u := newUIRig(t, nil)
	h := u.srv.hub
	stalled, _, cancelStalled := h.subscribe("alice")
	defer cancelStalled()
	reader, _, cancelReader := h.subscribe("alice")
	defer cancelReader()
	for i := range uiCallBuffer + 10 {
		h.publish(pipeline.CallEvent{Caller: "alice", Tool: "echo", CallID: strconv.Itoa(i)})
		select { // the reading page reads each one
		case ev, ok := <-reader:
			if !ok || ev.CallID != strconv.Itoa(i) {
				t.Fatalf("the reading page: event %d: %v %+v", i, ok, ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the reading page got nothing")
		}
	}
	n := 0
	for range stalled {
		n++
	}
	if n != uiCallBuffer || h.cutOff.Load() != 1 {
		t.Fatalf("the stalled page got %d events before its channel closed (cut off %d)", n, h.cutOff.Load())
	}
	if ac := h.recent["alice"]; len(ac.calls) != uiRecentCalls {
		t.Fatalf("recent calls kept: %d", len(ac.calls))
	}

	// Over HTTP: a stream whose recommendation feed is cut off ends, and
	// the reconnect begins with a snapshot.
	c, _, _ := u.signin("tok-alice")
	resp := u.raw(c, "GET", "/ui/api/events", "", "", nil)
	defer resp.Body.Close()
	evs := sse(resp.Body)
	if e := next(t, evs); e[0] != "snapshot" {
		t.Fatalf("first %v", e)
	}
	// The recommender cuts a subscriber off by closing its channel.
	u.back.mu.Lock()
	for ch := range u.back.subs {
		delete(u.back.subs, ch)
		close(ch)
	}
	u.back.mu.Unlock()
	for range evs { // the stream ends
	}
	resp2 := u.raw(c, "GET", "/ui/api/events", "", "", nil)
	defer resp2.Body.Close()
	if e := next(t, sse(resp2.Body)); e[0] != "snapshot" {
		t.Fatalf("after the reconnect: %v", e)
	}
}
