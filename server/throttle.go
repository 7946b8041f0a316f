package server

// Failed authentication is throttled per client, never for everyone: a
// limit shared by all clients lets one guesser lock every rightful user
// out. Each failure is counted under two keys, the client's address and
// the guessed token's first bytes; past a few free failures a key backs
// off, each further failure doubling its wait up to a ceiling. A request
// whose address or token prefix is backing off is answered 429 with
// Retry-After before its token is even compared — except a token whose
// prefix recently signed in successfully, at an address that backs off:
// on loopback every client shares one address, and a rightful user's
// token is not what the guesser keeps sending.

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// throttleFree failures per key are answered at once; each one after
	// backs off: throttleBase, doubled per failure, at most throttleMax.
	throttleFree = 5
	throttleBase = time.Second
	throttleMax  = 5 * time.Minute
	// throttleForget: a key with no failure for this long starts afresh.
	throttleForget = 10 * time.Minute
	// throttleKeys bounds the table: a client cannot grow it without end
	// by sending from many addresses or many prefixes.
	throttleKeys = 4096
	// tokenPrefixLen is how much of a token names it for throttling: short
	// enough that the server keeps nothing that helps guess the rest.
	tokenPrefixLen = 6
)

type throttleEntry struct {
	failures int
	last     time.Time // the last failure
	until    time.Time // no attempt before this
}

// authThrottle counts failed authentications per key (address, token
// prefix) and says how long a key must wait.
type authThrottle struct {
	mu   sync.Mutex
	keys map[string]*throttleEntry
	// failing is len(keys): while no attempt failed, checking an attempt
	// takes no lock.
	failing atomic.Int64
	good    sync.Map     // token prefix → time.Time it last authenticated
	ngood   atomic.Int64 // entries in good
	now     func() time.Time
}

func newAuthThrottle() *authThrottle {
	return &authThrottle{keys: map[string]*throttleEntry{}, now: time.Now}
}

// clientAddr is the key of r's client: its IP address (an IPv6 client by
// its /64, which one host usually holds whole). Forwarding headers are not
// trusted: behind a proxy every client is the proxy.
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "addr:" + host
	}
	if ip.To4() == nil {
		ip = ip.Mask(net.CIDRMask(64, 128))
	}
	return "addr:" + ip.String()
}

func tokenPrefix(tok string) string {
	if len(tok) > tokenPrefixLen {
		tok = tok[:tokenPrefixLen]
	}
	return "tok:" + tok
}

// wait is how long an attempt from addr with token tok must still wait
// (0: it may be checked now).
func (t *authThrottle) wait(addr, tok string) time.Duration {
	if t.failing.Load() == 0 {
		return 0
	}
	now := t.now()
	p := tokenPrefix(tok)
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.waitOf(p, now)
	if aw := t.waitOf(addr, now); aw > w {
		if g, ok := t.good.Load(p); ok && now.Sub(g.(time.Time)) < throttleForget && w == 0 {
			return 0 // a known token's prefix at a busy address: checked
		}
		w = aw
	}
	return w
}

func (t *authThrottle) waitOf(key string, now time.Time) time.Duration {
	e := t.keys[key]
	if e == nil || !e.until.After(now) {
		return 0
	}
	return e.until.Sub(now)
}

// failed counts a failed attempt under addr and tok's prefix and returns
// how long the next attempt from addr must wait.
func (t *authThrottle) failed(addr, tok string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.bump(tokenPrefix(tok), now)
	return t.bump(addr, now)
}

// succeeded remembers tok's prefix as one a rightful user sends. The
// table of them is bounded: when full, a new prefix is not remembered
// until the old ones are forgotten.
func (t *authThrottle) succeeded(tok string) {
	p := tokenPrefix(tok)
	now := t.now()
	if g, ok := t.good.Load(p); ok && now.Sub(g.(time.Time)) < throttleForget/2 {
		return // fresh enough: no write on the hot path
	}
	if t.ngood.Load() >= throttleKeys {
		t.good.Range(func(k, v any) bool {
			if now.Sub(v.(time.Time)) >= throttleForget {
				if _, loaded := t.good.LoadAndDelete(k); loaded {
					t.ngood.Add(-1)
				}
			}
			return true
		})
		if t.ngood.Load() >= throttleKeys {
			return
		}
	}
	if _, loaded := t.good.Swap(p, now); !loaded {
		t.ngood.Add(1)
	}
}

func (t *authThrottle) bump(key string, now time.Time) time.Duration {
	e := t.keys[key]
	if e != nil && now.Sub(e.last) >= throttleForget {
		e = nil
	}
	if e == nil {
		if len(t.keys) >= throttleKeys {
			t.evict(now)
		}
		e = &throttleEntry{}
		t.keys[key] = e
		t.failing.Store(int64(len(t.keys)))
	}
	e.failures++
	e.last = now
	if n := e.failures - throttleFree; n > 0 {
		d := throttleMax
		if n <= 20 && throttleBase<<(n-1) < throttleMax {
			d = throttleBase << (n - 1)
		}
		e.until = now.Add(d)
	}
	return t.waitOf(key, now)
}

// evict makes room: the forgotten keys go, and if none was, the one whose
// last failure is oldest (t.mu held).
func (t *authThrottle) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, e := range t.keys {
		if now.Sub(e.last) >= throttleForget && !e.until.After(now) {
			delete(t.keys, k)
			continue
		}
		if oldest == "" || e.last.Before(at) {
			oldest, at = k, e.last
		}
	}
	if len(t.keys) >= throttleKeys && oldest != "" {
		delete(t.keys, oldest)
	}
	t.failing.Store(int64(len(t.keys)))
}
