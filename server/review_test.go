package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/pipeline"
)

// reviewBackend is the UI's test backend with a real guard: alice is a
// reviewer, bob is not.
type reviewBackend struct {
	*uiBackend
	g *guard.Guard
}

func (b *reviewBackend) GuardEnabled() bool           { return true }
func (b *reviewBackend) CanReview(caller string) bool { return b.g.CanReview(caller) }
func (b *reviewBackend) Reviews(caller string, all bool) ([]guard.Review, error) {
	f := guard.Filter{All: all}
	if !b.g.CanReview(caller) {
		f.Caller = caller
	}
	return b.g.List(f)
}
func (b *reviewBackend) DecideReview(caller, id string, ch guard.Choice) (guard.Review, error) {
	return b.g.Decide(id, ch, "http:"+caller)
}

func newReviewRig(t *testing.T) *uiRig {
	t.Helper()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	echo := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, c *pipeline.Call) (json.RawMessage, error) {
		return p, nil
	})
	for _, tl := range []pipeline.Tool{
		{Name: "echo", Version: "1", Parameters: json.RawMessage(schema), Idempotent: true, ReadOnly: true, LatencyClass: pipeline.Fast},
		{Name: "erase", Version: "1", Parameters: json.RawMessage(schema), Destructive: true, LatencyClass: pipeline.Fast},
	} {
		if err := reg.Register("test", tl, echo); err != nil {
			t.Fatal(err)
		}
	}
	gdir := t.TempDir()
	g, err := guard.New(guard.Config{Dir: gdir, Reviewers: []string{"alice"}, ReviewTools: []string{"echo"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	ub := newUIBackend(m)
	s := New(&reviewBackend{uiBackend: ub, g: g}, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}}, MaxBody: 4096})
	ts := httptest.NewServer(s)
	t.Cleanup(func() {
		ts.Close()
		s.hub.stop()
		m.Close()
	})
	return &uiRig{t: t, srv: s, ts: ts, back: ub, m: m, guardDir: gdir}
}

func (u *uiRig) api(method, path, token, body string) (int, map[string]any) {
	u.t.Helper()
	hdr := map[string]string{"Authorization": "Bearer " + token}
	return u.do(u.ts.Client(), method, path, "", body, hdr)
}

// Over HTTP a destructive call answers 428 with a confirmation; only a
// reviewer decides it (the API or the page, CSRF-checked); approved, the
// same call runs once; denied, it is refused.
func TestReviewsOverHTTP(t *testing.T) {
	u := newReviewRig(t)
	code, v := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":1}}`)
	conf, _ := v["confirmation"].(map[string]any)
	if code != 428 || v["error"] != pipeline.KindIntentVerificationRequired || conf == nil || conf["expires_at"] == nil ||
		!strings.Contains(v["hint"].(string), "/v1/reviews/") {
		t.Fatalf("held call: %d %v", code, v)
	}
	id := conf["id"].(string)
	if conf["approve"] != "/v1/reviews/"+id+"/approve" || conf["tool"] != "erase" || conf["caller"] != "bob" {
		t.Fatalf("confirmation %v", conf)
	}

	code, v = u.api("GET", "/v1/reviews", "tok-bob", "")
	if rs, _ := v["reviews"].([]any); code != 200 || len(rs) != 1 || v["reviewer"] != false {
		t.Fatalf("bob's reviews: %d %v", code, v)
	}
	code, v = u.api("GET", "/v1/reviews", "tok-alice", "")
	if rs, _ := v["reviews"].([]any); code != 200 || len(rs) != 1 || v["reviewer"] != true || rs[0].(map[string]any)["id"] != id {
		t.Fatalf("alice's reviews: %d %v", code, v)
	}
	if code, v := u.api("POST", "/v1/reviews/"+id+"/approve", "tok-bob", ""); code != 403 || v["error"] != "not_a_reviewer" {
		t.Fatalf("bob approves his own call: %d %v", code, v)
	}
	if code, _ := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":1}}`); code != 428 {
		t.Fatalf("before approval: %d", code)
	}
	if code, v := u.api("POST", "/v1/reviews/"+id+"/approve", "tok-alice", `{"always":false}`); code != 200 || v["review"].(map[string]any)["status"] != guard.StatusApproved {
		t.Fatalf("approve: %d %v", code, v)
	}
	if code, v := u.api("POST", "/v1/reviews/"+id+"/deny", "tok-alice", ""); code != 409 || v["error"] != "review_decided" {
		t.Fatalf("second decision: %d %v", code, v)
	}
	if code, _ := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":2}}`); code != 428 {
		t.Fatalf("other arguments ran on n=1's approval: %d", code)
	}
	if code, v := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":1}}`); code != 200 {
		t.Fatalf("approved call: %d %v", code, v)
	}
	if code, v := u.api("POST", "/v1/reviews/cf-nope/approve", "tok-alice", ""); code != 404 || v["error"] != "review_not_found" {
		t.Fatalf("unknown id: %d %v", code, v)
	}
	// A reviewed read-only tool runs and is queued.
	if code, _ := u.api("POST", "/v1/call", "tok-bob", `{"tool":"echo","arguments":{"n":3}}`); code != 200 {
		t.Fatalf("reviewed echo: %d", code)
	}
	code, v = u.api("GET", "/v1/reviews", "tok-alice", "")
	rs, _ := v["reviews"].([]any)
	if len(rs) != 2 || rs[0].(map[string]any)["kind"] != guard.KindReview {
		t.Fatalf("queue after echo: %v", v)
	}

	// The page: alice's session says she reviews; denying takes the CSRF
	// token; bob's call is then refused.
	c, _, csrf := u.signin("tok-alice")
	code, v = u.do(c, "GET", "/ui/api/session", "", "", nil)
	gi, _ := v["guard"].(map[string]any)
	if code != 200 || gi == nil || gi["reviewer"] != true || len(gi["reviews"].([]any)) != 2 {
		t.Fatalf("session guard: %d %v", code, v)
	}
	pending := rs[1].(map[string]any)["id"].(string) // erase n=2
	if code, v := u.do(c, "POST", "/ui/api/reviews/"+pending+"/deny", "", "", nil); code != 403 || v["error"] != "csrf" {
		t.Fatalf("deny without the CSRF token: %d %v", code, v)
	}
	if code, v := u.do(c, "POST", "/ui/api/reviews/"+pending+"/deny", csrf, "", nil); code != 200 || v["review"].(map[string]any)["decided_by"] != "http:alice" {
		t.Fatalf("deny from the page: %d %v", code, v)
	}
	if code, v := u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":2}}`); code != 403 || v["error"] != pipeline.KindIntentMisaligned || !strings.Contains(v["hint"].(string), "refused") {
		t.Fatalf("denied call: %d %v", code, v)
	}
	bc, _, bcsrf := u.signin("tok-bob")
	if _, v := u.do(bc, "GET", "/ui/api/session", "", "", nil); v["guard"].(map[string]any)["reviewer"] != false {
		t.Fatalf("bob's session: %v", v)
	}
	u.api("POST", "/v1/call", "tok-bob", `{"tool":"erase","arguments":{"n":9}}`)
	_, v = u.do(bc, "GET", "/ui/api/reviews", "", "", nil)
	mine := v["reviews"].([]any)[0].(map[string]any)["id"].(string)
	if code, v := u.do(bc, "POST", "/ui/api/reviews/"+mine+"/approve", bcsrf, "", nil); code != 403 || v["error"] != "not_a_reviewer" {
		t.Fatalf("bob approves from the page: %d %v", code, v)
	}
}

func TestStatusForIntentVerification(t *testing.T) {
	if got := statusFor(&pipeline.IntentVerificationRequired{ID: "x"}); got != 428 {
		t.Fatalf("status %d, want 428", got)
	}
	seen := map[int]string{}
	for _, k := range pipeline.Kinds() {
		st := statusFor(kindErr(k))
		if prev, dup := seen[st]; dup && !(st == 403 || st == 422) {
			t.Errorf("%s and %s share status %d", prev, k, st)
		}
		seen[st] = k
	}
}

type kindErr string

func (k kindErr) Error() string { return string(k) }
func (k kindErr) Kind() string  { return string(k) }

// GET /v1/reviews answers a page: limit (default 100), offset, the total
// and the next page's offset; a bad limit is a 400 that says what to send.
func TestReviewsPaged(t *testing.T) {
	u := newReviewRig(t)
	for i := range 5 {
		if code, _ := u.api("POST", "/v1/call", "tok-bob", fmt.Sprintf(`{"tool":"erase","arguments":{"n":%d}}`, i)); code != 428 {
			t.Fatalf("call %d: %d", i, code)
		}
	}
	seen := map[any]bool{}
	next := any(float64(0))
	for next != nil {
		code, v := u.api("GET", fmt.Sprintf("/v1/reviews?limit=2&offset=%v", next), "tok-alice", "")
		rs, _ := v["reviews"].([]any)
		if code != 200 || len(rs) > 2 || v["total"] != float64(5) {
			t.Fatalf("page at %v: %d %v", next, code, v)
		}
		for _, r := range rs {
			seen[r.(map[string]any)["id"]] = true
		}
		next = v["next_offset"]
	}
	if len(seen) != 5 {
		t.Fatalf("pages held %d of 5 reviews", len(seen))
	}
	if code, v := u.api("GET", "/v1/reviews?limit=0", "tok-alice", ""); code != 400 || !strings.Contains(fmt.Sprint(v), "limit 1 to 1000") {
		t.Fatalf("limit=0: %d %v", code, v)
	}
}
