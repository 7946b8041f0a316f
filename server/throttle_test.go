package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// signinFrom posts the sign-in form from addr and answers the status and
// Retry-After.
func signinFrom(s *Server, addr, token string) (int, string) {
	r := httptest.NewRequest("POST", "/ui/signin", strings.NewReader(url.Values{"token": {token}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = addr
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code, w.Header().Get("Retry-After")
}

// A guesser at one address backs off, doubling; a rightful user at another
// address, or with a token already seen at the guesser's address, is not
// held up.
func TestSigninThrottledPerAddressWithBackoff(t *testing.T) {
	u := newUIRig(t, nil)
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	u.srv.throttle.now = clk.now
	const guesser, other = "10.0.0.1:5000", "10.0.0.2:5000"
	if code, _ := signinFrom(u.srv, "10.0.0.1:4000", "tok-alice"); code != http.StatusSeeOther {
		t.Fatalf("alice's first sign-in: %d", code)
	}
	for i := range throttleFree + 1 {
		if code, _ := signinFrom(u.srv, guesser, "wrong-"+string(rune('a'+i))); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, code)
		}
	}
	code, ra := signinFrom(u.srv, guesser, "wrong-x")
	if code != http.StatusTooManyRequests || ra != "1" {
		t.Fatalf("after %d failures: %d Retry-After %q, want 429 and 1", throttleFree+1, code, ra)
	}
	// A rightful user elsewhere is served at once.
	if code, _ := signinFrom(u.srv, other, "tok-bob"); code != http.StatusSeeOther {
		t.Fatalf("bob from another address: %d, want 303", code)
	}
	// A token that signed in before passes at the guesser's address
	// (loopback: every client there shares it) …
	if code, _ := signinFrom(u.srv, guesser, "tok-alice"); code != http.StatusSeeOther {
		t.Fatalf("alice at the guesser's address: %d, want 303", code)
	}
	// … and the guesser's next wrong token, once the wait is over, doubles it.
	clk.add(time.Second)
	if code, _ := signinFrom(u.srv, guesser, "wrong-y"); code != http.StatusUnauthorized {
		t.Fatalf("after the wait: %d, want 401", code)
	}
	if code, ra := signinFrom(u.srv, guesser, "wrong-z"); code != http.StatusTooManyRequests || ra != "2" {
		t.Fatalf("second back-off: %d Retry-After %q, want 429 and 2", code, ra)
	}
}

// The same wrong token prefix from many addresses backs off too.
func TestSigninThrottledPerTokenPrefix(t *testing.T) {
	u := newUIRig(t, nil)
	u.srv.throttle.now = (&fakeClock{t: time.Unix(1e9, 0)}).now
	for i := range throttleFree + 1 {
		addr := "10.0.1." + string(rune('1'+i)) + ":80"
		if code, _ := signinFrom(u.srv, addr, "tok-alXXXX"+string(rune('a'+i))); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, code)
		}
	}
	if code, _ := signinFrom(u.srv, "10.0.2.1:80", "tok-alYYYY"); code != http.StatusTooManyRequests {
		t.Fatalf("same prefix from a fresh address: %d, want 429", code)
	}
}

// Wrong bearer tokens are throttled per address: 429 with Retry-After,
// while another address's right token goes through; two Authorization
// headers are refused.
func TestBearerThrottledPerAddress(t *testing.T) {
	u := newUIRig(t, nil)
	u.srv.throttle.now = (&fakeClock{t: time.Unix(1e9, 0)}).now
	get := func(addr string, tokens ...string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v1/tools", nil)
		r.RemoteAddr = addr
		for _, tok := range tokens {
			r.Header.Add("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		u.srv.ServeHTTP(w, r)
		return w
	}
	var w *httptest.ResponseRecorder
	for i := range throttleFree + 2 {
		w = get("[2001:db8::1]:80", "nope-"+string(rune('a'+i)))
	}
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" || !strings.Contains(w.Body.String(), "too_many_failures") {
		t.Fatalf("guesser: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	// The same /64 is the same client.
	if w = get("[2001:db8::2]:80", "nope-z"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("guesser's neighbour in its /64: %d, want 429", w.Code)
	}
	if w = get("[2001:db9::1]:80", "tok-bob"); w.Code != http.StatusOK {
		t.Fatalf("bob from another address: %d %s", w.Code, w.Body)
	}
	if w = get("10.0.0.9:80", "tok-bob", "tok-alice"); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "more than one Authorization") {
		t.Fatalf("two Authorization headers: %d %s", w.Code, w.Body)
	}
}
