package server

// Heavy work (a selection or plan over long text, a call with a large
// body) takes a core for as long as it runs, and the Go scheduler gives a
// light request that arrives meanwhile no precedence over it. So heavy
// requests take a slot first: at most http.limits.heavy_per_agent of one
// agent at once, and at most http.limits.heavy_total of all agents at once
// (by default one less than the cores Go runs on, at least one), so that a
// light request always finds a core free of heavy work. A request that
// finds no slot waits for one in line (first come, first served among
// agents, as each agent has at most heavy_per_agent in line for the
// total); one whose client leaves stops waiting; past heavyQueue waiting of
// one agent, the next is refused 429 with Retry-After.

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/airs-dev/airs/internal/turns"
)

// heavyQueue bounds one agent's heavy requests waiting for a slot.
const heavyQueue = 16

type heavyGate struct {
	total    chan struct{}
	perAgent int

	mu     sync.Mutex
	agents map[string]*agentSlots // callers are configured agents: a small set
}

type agentSlots struct {
	slots   chan struct{}
	waiting int
}

func defaultHeavyTotal() int { return max(runtime.GOMAXPROCS(0)-1, 1) }

func newHeavyGate(l Limits) *heavyGate {
	return &heavyGate{total: make(chan struct{}, l.HeavyTotal), perAgent: l.HeavyPerAgent, agents: map[string]*agentSlots{}}
}

// errHeavyQueueFull: the caller has heavyQueue heavy requests waiting.
type errHeavyQueueFull struct{}

func (errHeavyQueueFull) Error() string { return "too many heavy requests of this agent waiting" }

// acquire takes caller's slot and one of the total, waiting in line; it
// returns the release, or ctx's error when the request ended waiting, or
// errHeavyQueueFull.
func (g *heavyGate) acquire(ctx context.Context, caller string) (func(), error) {
	g.mu.Lock()
	a := g.agents[caller]
	if a == nil {
		a = &agentSlots{slots: make(chan struct{}, g.perAgent)}
		g.agents[caller] = a
	}
	if a.waiting >= heavyQueue {
		g.mu.Unlock()
		return nil, errHeavyQueueFull{}
	}
	a.waiting++
	g.mu.Unlock()
	done := func() {
		g.mu.Lock()
		a.waiting--
		g.mu.Unlock()
	}
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
	select {
	case g.total <- struct{}{}:
	case <-ctx.Done():
		<-a.slots
		done()
		return nil, ctx.Err()
	}
	done()
	if err := ctx.Err(); err != nil {
		// Both were ready and the slot was picked: a request whose client
		// left does not run.
		<-g.total
		<-a.slots
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { <-g.total; <-a.slots }) }, nil
}

// heavy takes a heavy slot for r's caller when n, the bytes of the
// request's input, is over limit (or unknown, n < 0). It answers the
// release (a no-op for light work), or false when it answered the
// request itself (the queue is full: 429; the client left: nothing to
// answer). Until the release the request is heavy work (turns.Heavy): it
// no longer counts as light work in flight, and its checkpoints give way
// to light work. With cost, the CPU the request's goroutine uses until the
// release is charged to it (requestCost.chargeCPU): release must then be
// called on the goroutine that called heavy.
func (s *Server) heavy(w http.ResponseWriter, r *http.Request, n, limit int64, cost *requestCost) (func(), bool) {
	if n >= 0 && n <= limit {
		return func() {}, true
	}
	// Waiting for a slot is not light work either.
	_, done := turns.Heavy(r.Context())
	release, err := s.heavyGate.acquire(r.Context(), Caller(r.Context()))
	if err == nil {
		if cost == nil {
			return func() { release(); done() }, true
		}
		// The agent's heavy requests before this one are charged their CPU
		// when they end: this one pays for them before it runs, so that
		// several sent at once do not all run on one token each.
		if err := s.payOwed(cost.caller); err != nil {
			release()
			done()
			writeCallError(w, nil, err)
			return nil, false
		}
		_, metered := turns.Heavy(turns.WithCharge(r.Context(), func(cpu time.Duration) {
			cost.chargeCPU(cpu, s.cfg.HeavyCPUPerToken)
		}))
		var once sync.Once
		return func() {
			once.Do(func() {
				metered()
				release()
				done()
			})
		}, true
	}
	done()
	if _, full := err.(errHeavyQueueFull); full {
		w.Header().Set("Retry-After", "1")
		writeErrorBody(w, http.StatusTooManyRequests, map[string]any{"error": "rate_limited",
			"message": "too many large requests of this agent waiting for their turn",
			"hint":    "send large requests one after another (ask again after Retry-After); each agent runs http.limits.heavy_per_agent of them at once"})
		return nil, false
	}
	w.Header().Set("Retry-After", "1") // every 503 says when to come back
	writeError(w, http.StatusServiceUnavailable, "cancelled", "the request ended while waiting for its turn: "+err.Error())
	return nil, false
}
