package server

// A flood is answered cheaply and slowly. Two checks run before a request
// is routed, authenticated or its body read:
//
//   - A client that was told to come back later (a 429 with Retry-After)
//     and asks again before then is held, at no CPU cost, until it was
//     told to come back (at most holdTold), and only then served or
//     refused. A client that keeps asking early, several times a second,
//     is held longer each time, up to holdMax (earlyHold), and each such
//     request costs its agent a token of its rate limit. So flooding does
//     not pay: a client that asks again at once is answered no more often
//     than one that waits as told, and a request that comes after its
//     Retry-After is never held. A held request whose client leaves
//     ends there, nothing else done: no authentication, no token, no body
//     read, no answer — a client that gives up on its requests and sends
//     them again costs a parked connection each, not work. A client here
//     is its address with the credential it sends: on loopback every
//     client shares one address, and one agent's refusals must not hold
//     another. What it was told holds for the path it was told on: an
//     agent whose calls are refused for a while may still select and
//     plan.
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
	// holdTold bounds how long a request is held for what its client was
	// told: a longer refusal (a caller held back by caller_timeouts) is
	// answered after it, without reading the body.
	holdTold = time.Second
	// A client's early requests are counted, the count halving every
	// strikeHalfLife: while it is at most holdFree an early request is
	// held only until its client was told (several requests of one agent
	// in flight at once each learn of a 429 only from their own answer,
	// and a connection that is held sends at most one early request per
	// wait); each one past it is held holdStep longer, doubling, up to
	// holdMax in all. A client that keeps asking early several times a
	// second is soon held holdMax; one that waits as told, or has a few
	// requests in flight, never past what it was told.
	holdFree       = 8
	strikeHalfLife = time.Second
	holdStep       = 250 * time.Millisecond
	holdMax        = 8 * time.Second
	// floodTaxMax bounds what early requests make an agent owe: one
	// token each while its client's count is past holdFree, up to this
	// many owed in all, so a flood costs the flooding agent its own rate
	// limit and never locks it out for longer than its bucket takes to
	// pay this much.
	floodTaxMax = 100
	// strikeMemory: a client whose wait is over and that asked early for
	// none of this long is forgotten (its count has fallen below one).
	strikeMemory = 10 * time.Second
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
	until map[uint64]*toldClient // client → what it was told, and how it listened
	addrs map[string]*addrBucket // client address → its request bucket
	waits atomic.Int64           // len(until): while 0, the hold check takes no lock
}

// toldClient is a client that was told to come back later.
type toldClient struct {
	until      time.Time // when it was told to come back
	early      float64   // its requests that came before then, halving every strikeHalfLife
	lastStrike time.Time // its last early request
	caller     string    // the agent its credential authenticated as ("" unknown)
}

// forgotten reports whether c owes nothing any more: its wait is over and
// it asked early for none of the last strikeMemory.
func (c *toldClient) forgotten(now time.Time) bool {
	return !c.until.After(now) && now.Sub(c.lastStrike) >= strikeMemory
}

type addrBucket struct {
	tokens float64
	last   time.Time
}

func newFloodGate(l Limits) *floodGate {
	return &floodGate{perSecond: float64(l.PerAddressPerSecond), burst: float64(l.PerAddressBurst),
		seed: maphash.MakeSeed(), now: time.Now, sleep: sleepCtx, until: map[uint64]*toldClient{}, addrs: map[string]*addrBucket{}}
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

// holdFor is how long the client's request must wait (0: it was told
// nothing, or its wait is over). A request before its wait is over is
// early: held until then (at most holdTold), and while the client's count
// of early requests is past holdFree longer, each one doubling, up to
// holdMax. Such a request also costs its agent a token (oweFloodTax): tax
// names the agent, "" when there is none to charge.
func (g *floodGate) holdFor(key uint64) (hold time.Duration, tax string) {
	if g.waits.Load() == 0 {
		return 0, ""
	}
	now := g.now()
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.until[key]
	if !ok {
		return 0, ""
	}
	if !c.until.After(now) {
		if c.forgotten(now) {
			delete(g.until, key)
			g.waits.Store(int64(len(g.until)))
		}
		return 0, "" // it waited as told: never held
	}
	c.early = min(c.early*math.Exp2(-now.Sub(c.lastStrike).Seconds()/strikeHalfLife.Seconds()), 2*holdFree) + 1
	c.lastStrike = now
	if int(c.early) > holdFree {
		tax = c.caller
	}
	return earlyHold(c.until.Sub(now), c.early), tax
}

// earlyHold is the hold of an early request of a client whose count of
// early requests is n, with left of the wait it was told still to go.
func earlyHold(left time.Duration, n float64) time.Duration {
	d := min(left, holdTold)
	if over := int(n) - holdFree; over > 0 {
		d += holdStep << min(over-1, 8)
	}
	return min(d, holdMax)
}

// told records that the client was told to come back after d, and the
// agent it authenticated as ("" unknown: it was refused before); what it
// did before (its early requests) is kept.
func (g *floodGate) told(key uint64, d time.Duration, caller string) {
	now := g.now()
	u := now.Add(d)
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.until[key]; ok {
		if u.After(c.until) {
			c.until = u
		}
		if caller != "" {
			c.caller = caller
		}
		return
	}
	if len(g.until) >= floodKeys {
		g.evictTold(now)
		if len(g.until) >= floodKeys {
			return // full of clients told to wait: this one is not held
		}
	}
	g.until[key] = &toldClient{until: u, caller: caller}
	g.waits.Store(int64(len(g.until)))
}

// evictTold makes room: the forgotten clients go, and if none was, those
// whose wait is over (g.mu held).
func (g *floodGate) evictTold(now time.Time) {
	for k, c := range g.until {
		if c.forgotten(now) {
			delete(g.until, k)
		}
	}
	if len(g.until) >= floodKeys {
		for k, c := range g.until {
			if !c.until.After(now) {
				delete(g.until, k)
			}
		}
	}
	g.waits.Store(int64(len(g.until)))
}

// hold waits d, or until the request ends; it does not hold past maxHeld
// requests at once. It reports whether the request's client is still
// there to be answered.
func (g *floodGate) hold(r *http.Request, d time.Duration) bool {
	if g.held.Add(1) > maxHeld {
		g.held.Add(-1)
		return r.Context().Err() == nil
	}
	defer g.held.Add(-1)
	g.sleep(r.Context(), d)
	return r.Context().Err() == nil
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
