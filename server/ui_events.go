package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Bounds of the page's event stream.
const (
	uiCallBuffer    = 256             // call events queued per page before it is cut off
	uiRecentCalls   = 20              // calls per agent a new page starts with
	uiHubCallers    = 1024            // agents whose recent calls are kept
	uiHubBuffer     = 4096            // the hub's own subscription to the pipeline
	uiBreakerRecalc = 5 * time.Second // breakers are looked at this often without calls
	// uiGuardRecalc: a page's review queue is looked at this often, for the
	// calls held by other processes (the CLI) whose events this server does
	// not see; the held calls it sees are pushed at once.
	uiGuardRecalc = 500 * time.Millisecond
)

// poke wakes every waiter at once: fire closes the channel waiters hold
// and puts a new one in its place.
type poke struct {
	mu sync.Mutex
	ch chan struct{}
}

func (p *poke) wait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

func (p *poke) fire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

// heldKind says whether a call event changes a review queue: the guard
// held it for a person, or refused it on a reviewer's answer.
func heldKind(kind string) bool {
	return kind == pipeline.KindIntentVerificationRequired || kind == pipeline.KindIntentMisaligned
}

// callHub is the one subscription to the pipeline's call events that every
// page shares: it keeps each agent's last calls (a page's snapshot) and
// hands each page its agent's calls through a bounded buffer. A page whose
// buffer is full is cut off (its channel closes), never slowing the others.
type callHub struct {
	mu      sync.Mutex
	sub     *pipeline.Subscription
	done    chan struct{}
	recent  map[string]*agentCalls
	clients map[*hubClient]struct{}
	stopped bool
	cutOff  atomic.Uint64
	// reviews fires when any agent's call was held or refused by the guard
	// and when a reviewer decided: the pages look at their queues then.
	reviews poke

	// The calls shown, by id (ui_othercalls.go: a call arrives as an event
	// and as an audit line), and the audit log's follower.
	seen      map[string]struct{}
	seenOrder []string
	tailStop  chan struct{}
	tailDone  chan struct{}
}

type agentCalls struct {
	calls []pipeline.CallEvent // oldest first, at most uiRecentCalls
	last  time.Time
}

type hubClient struct {
	caller string
	ch     chan pipeline.CallEvent
	closed bool
}

func newCallHub(b func() UIBackend) *callHub {
	h := &callHub{recent: map[string]*agentCalls{}, clients: map[*hubClient]struct{}{}, done: make(chan struct{}),
		seen: map[string]struct{}{}}
	h.sub = b().SubscribeCalls(uiHubBuffer)
	go h.run()
	if lb, ok := b().(UICallLogBackend); ok && lb.CallLogPath() != "" {
		h.tailStop, h.tailDone = make(chan struct{}), make(chan struct{})
		go h.followLog(lb.CallLogPath(), h.tailStop, h.tailDone)
	}
	return h
}

func (h *callHub) run() {
	defer close(h.done)
	for ev := range h.sub.C {
		h.publish(ev)
	}
}

func (h *callHub) publish(ev pipeline.CallEvent) {
	ev.Params = nil // never shown, never kept here
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seenCall(ev.CallID) {
		return
	}
	if heldKind(ev.ErrorKind) {
		defer h.reviews.fire()
	}
	ac := h.recent[ev.Caller]
	if ac == nil {
		if len(h.recent) >= uiHubCallers {
			h.evict()
		}
		ac = &agentCalls{}
		h.recent[ev.Caller] = ac
	}
	ac.last = time.Now()
	if len(ac.calls) >= uiRecentCalls {
		ac.calls = append(ac.calls[:0], ac.calls[1:]...)
	}
	ac.calls = append(ac.calls, ev)
	for c := range h.clients {
		if c.caller != ev.Caller {
			continue
		}
		select {
		case c.ch <- ev:
		default:
			h.cutOff.Add(1)
			h.drop(c)
		}
	}
}

// evict forgets the agent whose last call is the oldest (h.mu held).
func (h *callHub) evict() {
	var oldest string
	var t time.Time
	for n, ac := range h.recent {
		if oldest == "" || ac.last.Before(t) {
			oldest, t = n, ac.last
		}
	}
	delete(h.recent, oldest)
}

func (h *callHub) drop(c *hubClient) {
	delete(h.clients, c)
	if !c.closed {
		c.closed = true
		close(c.ch)
	}
}

// subscribe returns the caller's recent calls and, from then on, its new
// ones: nothing missed, nothing twice.
func (h *callHub) subscribe(caller string) (<-chan pipeline.CallEvent, []pipeline.CallEvent, func()) {
	c := &hubClient{caller: caller, ch: make(chan pipeline.CallEvent, uiCallBuffer)}
	h.mu.Lock()
	var recent []pipeline.CallEvent
	if ac := h.recent[caller]; ac != nil {
		recent = append(recent, ac.calls...)
	}
	if h.stopped {
		c.closed = true
		close(c.ch)
	} else {
		h.clients[c] = struct{}{}
	}
	h.mu.Unlock()
	var once sync.Once
	return c.ch, recent, func() {
		once.Do(func() {
			h.mu.Lock()
			h.drop(c)
			h.mu.Unlock()
		})
	}
}

// stop ends the hub's subscription and every page's channel.
func (h *callHub) stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	for c := range h.clients {
		h.drop(c)
	}
	h.mu.Unlock()
	h.sub.Close()
	<-h.done
	if h.tailStop != nil {
		close(h.tailStop)
		<-h.tailDone
	}
}

// uiEvents is the page's one event stream, the agent's recommendations and
// calls multiplexed. Events (each `data:` one JSON value):
//
//	snapshot   {"agent", "task", "task_version", "recommendations": [...], "calls": [...oldest first],
//	           "breakers": [...], "guard": null or {"reviewer", "reviews": [...], "grants"?: [...]}}
//	           — always first, after every reconnect too
//	new, expired, accepted, dismissed
//	           one recommendation (as GET /v1/recommendations/stream sends it)
//	call       one call of the agent's as the pipeline delivered it (pipeline.CallEvent:
//	           call_id, caller, provider, tool, outcome, error_kind, latency_ns, at)
//	breakers   {"breakers": [...]}: the breakers of the tools the agent may call, when
//	           they changed (pipeline.ToolBreaker)
//	guard      the snapshot's "guard" again when it changed: a call held (of any
//	           agent, for a reviewer), decided, expired or a grant revoked
//	task       {"task", "version"} when the task changed (this page, another, the CLI)
//
// plus a `: keep-alive` comment every 15 s and `retry: 1000`. Both sources
// are bounded per page (the recommender's subscriber buffer, the hub's
// uiCallBuffer) and one write may take at most streamWriteTimeout: a page that
// does not read is cut off — its stream ends — and its EventSource
// reconnects and starts again from a snapshot. The stream also ends with
// the request's time (RequestTimeout) and on shutdown; the page reconnects.
func (s *Server) uiEvents(w http.ResponseWriter, r *http.Request) {
	es, ok := newEventStream(w)
	if !ok {
		return
	}
	defer es.done()
	caller := Caller(r.Context())
	recs, cancelRecs := s.ub().SubscribeRecommendations(caller)
	defer cancelRecs()
	calls, recent, cancelCalls := s.hub.subscribe(caller)
	defer cancelCalls()
	if !es.start() {
		return
	}
	send := es.send
	if recent == nil {
		recent = []pipeline.CallEvent{}
	}
	breakers := s.uiBreakers(caller)
	task := s.ub().Task(caller)
	guardNow := s.hub.reviews.wait() // before the look: a change after it is not missed
	guardState := jsonBytes(s.guardInfo(caller))
	if !send("snapshot", jsonBytes(map[string]any{"agent": caller, "task": task, "task_version": taskVersion(task),
		"recommendations": s.uiRecs(caller), "calls": recent, "breakers": json.RawMessage(breakers), "guard": json.RawMessage(guardState)})) {
		return
	}
	lastBreakers, checked, dirty := breakers, time.Now(), false
	// sendGuard sends the guard's state when it changed since last sent.
	sendGuard := func() bool {
		g := jsonBytes(s.guardInfo(caller))
		if bytes.Equal(g, guardState) {
			return true
		}
		guardState = g
		return send("guard", g)
	}
	var guardTick <-chan time.Time
	if b, ok := s.rvb(); ok && b.GuardEnabled() {
		t := time.NewTicker(uiGuardRecalc)
		defer t.Stop()
		guardTick = t.C
	}

	keep := time.NewTicker(streamKeepAlive)
	defer keep.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.streamsStop:
			return
		case <-keep.C:
			if !es.keepAlive() {
				return
			}
		case <-guardNow:
			guardNow = s.hub.reviews.wait()
			if !sendGuard() {
				return
			}
		case <-guardTick:
			if !sendGuard() {
				return
			}
		case <-tick.C:
			// The task may have been set elsewhere (the CLI, the API,
			// another page): the recommender reads it within its sweep.
			if t := s.ub().Task(caller); t != task {
				task = t
				if !send("task", jsonBytes(map[string]string{"task": t, "version": taskVersion(t)})) {
					return
				}
			}
			if !dirty && time.Since(checked) < uiBreakerRecalc {
				continue
			}
			b := s.uiBreakers(caller)
			checked, dirty = time.Now(), false
			if !bytes.Equal(b, lastBreakers) {
				lastBreakers = b
				if !send("breakers", []byte(`{"breakers":`+string(b)+`}`)) {
					return
				}
			}
		case u, ok := <-recs:
			if !ok || !send(u.Type, jsonBytes(u.Recommendation)) {
				return
			}
		case ev, ok := <-calls:
			if !ok || !send("call", jsonBytes(ev)) {
				return
			}
			dirty = true
		}
	}
}

// uiBreakers is the JSON list of the breakers of caller's tools.
func (s *Server) uiBreakers(caller string) []byte {
	b := s.ub().Breakers(caller)
	if b == nil {
		b = []pipeline.ToolBreaker{}
	}
	return jsonBytes(b)
}
