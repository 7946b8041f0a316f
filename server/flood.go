package server

// A flood is answered cheaply and slowly. Two checks run before a request
// is routed, authenticated or its body read:
//
//   - A client that was told to come back later (a 429 with Retry-After)
//     and asks again before then is held, at no CPU cost, until it was
//     told to come back (at most holdMax), and only then served or
//     refused. A client that waits as told is never held; one that asks
//     again at once gets its answers at the pace it was told, so a flood
//     costs what a well-behaved client costs. A client here is its
//     address with the credential it sends: on loopback every client
//     shares one address, and one agent's refusals must not hold another.
//     What it was told holds for the path it was told on: an agent whose
//     calls are refused for a while may still select and plan.
//   - Each client address has a token bucket of requests
//     (http.limits.per_address_per_second and per_address_burst): past
//     it, 429 with Retry-After, nothing read.
//
// Both tables are bounded: a client cannot grow them without end by
// sending from many addresses or with many credentials.

import (
	"context"
	"hash/maphash"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// holdMax bounds how long one request is held: a longer refusal (a
	// caller held back by caller_timeouts) is answered after it, without
	// reading the body, so a flooding client asks at most once per holdMax
	// per connection.
	holdMax = time.Second
	// maxHeld bounds the requests held at once; past it a request is not
	// held (it is refused cheaply instead, as before it was held).
	maxHeld = 4096
	// floodKeys bounds each table (clients told to wait, address buckets).
	floodKeys = 8192
)

// floodGate holds the clients that did not wait as told and keeps each
// address's request bucket.
type floodGate struct {
	perSecond float64
	burst     float64
	seed      maphash.Seed
	now       func() time.Time
	sleep     func(ctx context.Context, d time.Duration) // waits d or until ctx ends
	held      atomic.Int64

	mu    sync.Mutex
	until map[uint64]time.Time   // client → when it was told to come back
	addrs map[string]*addrBucket // client address → its request bucket
	waits atomic.Int64           // len(until): while 0, the hold check takes no lock
}

type addrBucket struct {
	tokens float64
	last   time.Time
}

func newFloodGate(l Limits) *floodGate {
	return &floodGate{perSecond: float64(l.PerAddressPerSecond), burst: float64(l.PerAddressBurst),
		seed: maphash.MakeSeed(), now: time.Now, sleep: sleepCtx, until: map[uint64]time.Time{}, addrs: map[string]*addrBucket{}}
}

// clientKey names the client of r and what it asks: its address, the
// credential it sends (hashed: the table keeps no secret) and the path.
func (g *floodGate) clientKey(addr string, r *http.Request) uint64 {
	var h maphash.Hash
	h.SetSeed(g.seed)
	h.WriteString(addr)
	h.WriteByte(0)
	h.WriteString(r.Header.Get("Authorization"))
	h.WriteByte(0)
	h.WriteString(r.URL.Path)
	return h.Sum64()
}

// holdFor is how long the client must still wait, as it was told (0: it
// was told nothing, or its wait is over).
func (g *floodGate) holdFor(key uint64) time.Duration {
	if g.waits.Load() == 0 {
		return 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	u, ok := g.until[key]
	if !ok {
		return 0
	}
	if !u.After(now) {
		delete(g.until, key)
		g.waits.Store(int64(len(g.until)))
		return 0
	}
	return u.Sub(now)
}

// told records that the client was told to come back after d.
func (g *floodGate) told(key uint64, d time.Duration) {
	now := g.now()
	u := now.Add(d)
	g.mu.Lock()
	defer g.mu.Unlock()
	if old, ok := g.until[key]; ok && !u.After(old) {
		return
	}
	if len(g.until) >= floodKeys {
		for k, v := range g.until {
			if !v.After(now) {
				delete(g.until, k)
			}
		}
		if len(g.until) >= floodKeys {
			return // full of clients told to wait: this one is not held
		}
	}
	g.until[key] = u
	g.waits.Store(int64(len(g.until)))
}

// hold waits d (at most holdMax), or until the request ends; it does not
// hold past maxHeld requests at once.
func (g *floodGate) hold(r *http.Request, d time.Duration) {
	if g.held.Add(1) > maxHeld {
		g.held.Add(-1)
		return
	}
	defer g.held.Add(-1)
	g.sleep(r.Context(), min(d, holdMax))
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// takeAddr takes one request from addr's bucket: 0 when there was one,
// else how long until there is.
func (g *floodGate) takeAddr(addr string) time.Duration {
	if g.perSecond <= 0 {
		return 0
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.addrs[addr]
	if b == nil {
		if len(g.addrs) >= floodKeys {
			g.evictAddrs(now)
		}
		b = &addrBucket{tokens: g.burst, last: now}
		g.addrs[addr] = b
	}
	if el := now.Sub(b.last); el > 0 {
		b.tokens = math.Min(g.burst, b.tokens+el.Seconds()*g.perSecond)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	return time.Duration((1 - b.tokens) / g.perSecond * float64(time.Second))
}

// evictAddrs drops the buckets that are full again (their addresses
// owe nothing), and if none is, every one (g.mu held).
func (g *floodGate) evictAddrs(now time.Time) {
	for a, b := range g.addrs {
		if b.tokens+now.Sub(b.last).Seconds()*g.perSecond >= g.burst {
			delete(g.addrs, a)
		}
	}
	if len(g.addrs) >= floodKeys {
		clear(g.addrs)
	}
}

// retryAfterOf is the wait a 429's Retry-After header says (0: none).
func retryAfterOf(h http.Header) time.Duration {
	n, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(n) * time.Second
}

// writeAddressLimited answers a request over its address's request rate.
func writeAddressLimited(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", retryAfterSeconds(wait))
	writeErrorBody(w, http.StatusTooManyRequests, map[string]any{"error": "rate_limited",
		"message": "too many requests from this address: wait " + retryAfterSeconds(wait) + " s",
		"hint":    "ask again after Retry-After; the server allows http.limits.per_address_per_second requests a second per client address (airs.yaml)"})
}
