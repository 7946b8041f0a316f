package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// Speculative execution: a call the engine predicts
// the caller will make next runs ahead of time, and the real call, when it
// comes with the same params, is answered from that result at once.
//
// The sandbox rule is the tool's own metadata: only a tool that is both
// ReadOnly (it changes nothing) and Idempotent (the same params give the
// same answer) is ever run speculatively, so running it early has no side
// effect and its result stays the answer until something writes. Three
// more rules keep a cached result from being the wrong answer:
//
//   - The speculative call takes every stage as its caller (lookup,
//     channel and required capabilities, schema, dispatch budget), and the
//     real call takes them all again before the cache is consulted — the
//     lookup sits right before execution — so a capability revoked in
//     between is refused, never served from the cache.
//   - The key is (caller, tool, provider, version, canonical params hash):
//     nobody is served another caller's result, nor another version's.
//   - A result lives for TTL, is used at most once, and every call of a
//     tool that is not read-only (by any caller: spaces are shared)
//     invalidates every cached result, as does one that was in flight
//     while the speculation ran.
//
// A speculative call is not a real one: it takes no rate-limit token (the
// speculation budget bounds it instead), asks no intent gate or verifier
// (the real call does, before it is served), publishes no CallEvent and
// counts in no per-tool statistics; its audit record says
// "speculative":true. A real call served from it says
// "speculative_hit":true and names it ("speculation_of"), which is how
// the log tells used speculations from wasted ones (audit.Speculations).

// SpeculationConfig bounds speculative execution; zero fields take the
// defaults in brackets. Disabled (the zero value), Speculate refuses
// everything and real calls never look at the cache.
type SpeculationConfig struct {
	Enabled bool
	// MaxInflight: speculative calls running at once [2].
	MaxInflight int
	// PerMinute: speculative calls per caller per minute [30].
	PerMinute int
	// TTL: how long a speculative result may answer a real call [10 s].
	// It also bounds how stale a result can be when something outside
	// AIRS changes what the tool reads.
	TTL time.Duration
	// IdleBelow: speculation runs only while fewer real calls than this are
	// in flight [4] — it uses spare capacity, never competes for it.
	IdleBelow int
	// MaxEntries: results kept at once [256]; the oldest is discarded.
	MaxEntries int
	// MaxResultBytes: a larger result is not kept [256 KiB].
	MaxResultBytes int
}

func (c SpeculationConfig) withDefaults() SpeculationConfig {
	if c.MaxInflight <= 0 {
		c.MaxInflight = 2
	}
	if c.PerMinute <= 0 {
		c.PerMinute = 30
	}
	if c.TTL <= 0 {
		c.TTL = 10 * time.Second
	}
	if c.IdleBelow <= 0 {
		c.IdleBelow = 4
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = 256
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = 256 << 10
	}
	return c
}

// Speculate refuses with these (they are not error kinds: a speculation is
// the engine's guess, never a caller's request, and nobody sees them).
var (
	// ErrNotSpeculable: the tool is not both read-only and idempotent (or
	// the call needs a version migration).
	ErrNotSpeculable = errors.New("pipeline: only read-only, idempotent tools run speculatively")
	// ErrSpeculationBudget: speculation is off, or its budget is spent
	// (MaxInflight, PerMinute, IdleBelow), or the call is already cached
	// or running.
	ErrSpeculationBudget = errors.New("pipeline: speculation budget spent")
)

// SpeculationStats counts what speculation did since the Manager started.
type SpeculationStats struct {
	Started  uint64 // speculative calls admitted by the budget
	Refused  uint64 // refused: ErrNotSpeculable or ErrSpeculationBudget
	Failed   uint64 // ran but did not end ok (nothing cached)
	Stored   uint64 // results cached
	Hits     uint64 // real calls answered from a cached result
	Discards uint64 // cached results never used: expired, evicted, invalidated
	// Saved is the handler time of the speculations that were used (what
	// their real calls did not wait for); Wasted the handler time of those
	// that were not (failed or discarded).
	Saved, Wasted time.Duration
}

type specKey struct {
	caller, tool, provider, version, params string
}

// specPending is (caller, tool, params) without the provider, which is
// only known after lookup: one speculation of a call at a time.
type specPending struct{ caller, tool, params string }

type specEntry struct {
	key     specKey
	callID  string
	out     json.RawMessage
	handler time.Duration
	expires time.Time
	gen     uint64
}

type speculation struct {
	cfg SpeculationConfig

	// gen moves at the start and at the end of every call of a tool that
	// is not read-only: a result is valid only while gen is what it was
	// when its handler started.
	gen      atomic.Uint64
	inflight atomic.Int64
	size     atomic.Int64 // len(entries), read without the lock: most real calls find the cache empty

	mu      sync.Mutex
	entries map[specKey]*specEntry
	order   []*specEntry // insertion order, for eviction
	pending map[specPending]bool
	issued  map[string][]time.Time // per caller, the last minute's admissions

	stats struct {
		started, refused, failed, stored, hits, discards atomic.Uint64
		saved, wasted                                    atomic.Int64
	}
}

func newSpeculation(cfg SpeculationConfig) *speculation {
	return &speculation{cfg: cfg.withDefaults(), entries: map[specKey]*specEntry{},
		pending: map[specPending]bool{}, issued: map[string][]time.Time{}}
}

// canonicalParams hashes the decoded params: encoding/json writes object
// keys sorted and json.Number as its literal, so `{"b":1,"a":2}` and
// `{"a":2, "b":1}` are one call while 1 and 1.0 stay two (the handler
// sees the literal; a miss is cheap, a wrong hit is not).
func canonicalParams(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func speculable(t *Tool) bool { return t.ReadOnly && t.Idempotent && !t.Destructive }

// Speculate runs req ahead of time as req.Caller and caches its result for
// a real call with the same key. It returns ErrNotSpeculable or
// ErrSpeculationBudget without running anything when the call may not or
// need not run; otherwise the Result of the speculative run (its Output is
// what a matching real call will get) and the run's error, if any.
// Call(ctx, req) with req.Speculative set is the same.
func (m *Manager) Speculate(ctx context.Context, req Request) (*Result, error) {
	req.Speculative = true
	s := m.spec
	if req.CallID == "" {
		req.CallID = "spec-" + m.newCallID()
	}
	res := &Result{CallID: req.CallID, Tool: req.Tool, Provider: req.Provider}
	if m.closed.Load() {
		res.Outcome, res.ErrorKind = OutcomeError, KindOf(ErrClosed)
		return res, ErrClosed
	}
	// A cheap refusal before any stage: every candidate must be
	// speculable (the one lookup picks is checked again before it runs).
	cands := m.reg.candidates(req.Tool, req.Version)
	if len(cands) == 0 {
		return m.specRefused(res, ErrNotSpeculable)
	}
	for _, e := range cands {
		if !speculable(&e.tool) {
			return m.specRefused(res, ErrNotSpeculable)
		}
	}
	if req.Encoding != JSON || !s.cfg.Enabled {
		return m.specRefused(res, ErrSpeculationBudget)
	}
	v, err := decodeJSON(req.Params)
	if len(req.Params) == 0 {
		v, err = map[string]any{}, nil
	}
	if err != nil {
		return m.specRefused(res, err)
	}
	pk := specPending{req.Caller, req.Tool, canonicalParams(v)}
	if !s.admit(m, pk) {
		return m.specRefused(res, ErrSpeculationBudget)
	}
	defer s.release(pk)

	cs := callState{req: &req, start: time.Now(), wall: m.now()}
	m.active.Add(1)
	defer m.active.Add(-1)
	if m.closed.Load() {
		res.Outcome, res.ErrorKind = OutcomeError, KindOf(ErrClosed)
		return res, ErrClosed
	}
	cs.fl = m.flights.add(req.CallID)
	err = m.run(ctx, &cs, res)
	m.flights.remove(cs.fl)
	return m.deliverSpeculative(&cs, res, err)
}

func (m *Manager) specRefused(res *Result, err error) (*Result, error) {
	m.spec.stats.refused.Add(1)
	res.Outcome, res.ErrorKind = OutcomeError, "speculation_refused"
	return res, err
}

// admit applies the budget and marks pk pending.
func (s *speculation) admit(m *Manager, pk specPending) bool {
	now := m.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending[pk] {
		return false
	}
	for k, e := range s.entries { // already cached and fresh: nothing to do
		if k.caller == pk.caller && k.tool == pk.tool && k.params == pk.params && now.Before(e.expires) {
			return false
		}
	}
	// Real calls in flight: every call inside Call or Speculate, minus the
	// speculative ones.
	if real := m.active.Load() - s.inflight.Load(); real >= int64(s.cfg.IdleBelow) {
		return false
	}
	if s.inflight.Load() >= int64(s.cfg.MaxInflight) {
		return false
	}
	ts := s.issued[pk.caller]
	i := 0
	for i < len(ts) && now.Sub(ts[i]) >= time.Minute {
		i++
	}
	ts = ts[i:]
	if len(ts) >= s.cfg.PerMinute {
		s.issued[pk.caller] = ts
		return false
	}
	s.issued[pk.caller] = append(ts, now)
	if len(s.issued) > 4*s.cfg.MaxEntries { // callers that stopped: forget them
		for c, ts := range s.issued {
			if len(ts) == 0 || now.Sub(ts[len(ts)-1]) >= time.Minute {
				delete(s.issued, c)
			}
		}
	}
	s.pending[pk] = true
	s.inflight.Add(1)
	s.stats.started.Add(1)
	return true
}

func (s *speculation) release(pk specPending) {
	s.mu.Lock()
	delete(s.pending, pk)
	s.mu.Unlock()
	s.inflight.Add(-1)
}

// executeOrSpeculated is stage 6 with speculation around it (call.go's one
// hook, after every check): a speculative call runs only a speculable
// tool; a real call of a speculable tool takes a matching cached result
// instead of running; a real call of a tool that writes invalidates every
// cached result, before and after it runs.
func (m *Manager) executeOrSpeculated(hctx context.Context, cs *callState) (json.RawMessage, error) {
	s, e := m.spec, cs.entry
	switch {
	case cs.req.Speculative:
		if !speculable(&e.tool) || cs.mig != nil {
			return nil, ErrNotSpeculable
		}
		cs.specGen = s.gen.Load()
		return m.execute(hctx, cs)
	case !e.tool.ReadOnly:
		s.gen.Add(1)
		defer s.gen.Add(1)
		return m.execute(hctx, cs)
	case s.cfg.Enabled && speculable(&e.tool) && cs.mig == nil:
		if hit := s.take(cs, m.now()); hit != nil {
			cs.specOf = hit.callID
			return hit.out, nil
		}
	}
	return m.execute(hctx, cs)
}

func (cs *callState) specKey() specKey {
	return specKey{caller: cs.req.Caller, tool: cs.entry.tool.Name, provider: cs.entry.prov.id,
		version: cs.entry.tool.Version, params: canonicalParams(cs.params.value)}
}

// take removes and returns the entry for cs's call if it is still valid.
func (s *speculation) take(cs *callState, now time.Time) *specEntry {
	if s.size.Load() == 0 {
		return nil // nothing cached: no key to compute
	}
	k := cs.specKey()
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil {
		return nil
	}
	s.removeLocked(e)
	if !now.Before(e.expires) || e.gen != s.gen.Load() {
		s.discardLocked(e)
		return nil
	}
	s.stats.hits.Add(1)
	s.stats.saved.Add(int64(e.handler))
	return e
}

// store keeps an ok speculative result, unless a write moved gen while it
// ran or it is too large.
func (s *speculation) store(cs *callState, res *Result, now time.Time) {
	if len(res.Output) > s.cfg.MaxResultBytes || s.gen.Load() != cs.specGen {
		s.stats.wasted.Add(int64(cs.handler))
		s.stats.discards.Add(1)
		return
	}
	e := &specEntry{key: cs.specKey(), callID: res.CallID, out: res.Output, handler: cs.handler,
		expires: now.Add(s.cfg.TTL), gen: cs.specGen}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.entries[e.key]; old != nil {
		s.removeLocked(old)
		s.discardLocked(old)
	}
	// Expired and invalidated entries go first, then the oldest.
	cur := s.gen.Load()
	for _, o := range append([]*specEntry(nil), s.order...) {
		if !now.Before(o.expires) || o.gen != cur {
			s.removeLocked(o)
			s.discardLocked(o)
		}
	}
	for len(s.order) >= s.cfg.MaxEntries {
		o := s.order[0]
		s.removeLocked(o)
		s.discardLocked(o)
	}
	s.entries[e.key] = e
	s.order = append(s.order, e)
	s.size.Store(int64(len(s.entries)))
	s.stats.stored.Add(1)
}

func (s *speculation) removeLocked(e *specEntry) {
	delete(s.entries, e.key)
	s.size.Store(int64(len(s.entries)))
	for i, o := range s.order {
		if o == e {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

func (s *speculation) discardLocked(e *specEntry) {
	s.stats.discards.Add(1)
	s.stats.wasted.Add(int64(e.handler))
}

// SpeculationStats returns the counters, after discarding the results
// that expired, so that Discards and Wasted are up to date.
func (m *Manager) SpeculationStats() SpeculationStats {
	s := m.spec
	now := m.now()
	s.mu.Lock()
	cur := s.gen.Load()
	for _, o := range append([]*specEntry(nil), s.order...) {
		if !now.Before(o.expires) || o.gen != cur {
			s.removeLocked(o)
			s.discardLocked(o)
		}
	}
	s.mu.Unlock()
	st := &s.stats
	return SpeculationStats{Started: st.started.Load(), Refused: st.refused.Load(), Failed: st.failed.Load(),
		Stored: st.stored.Load(), Hits: st.hits.Load(), Discards: st.discards.Load(),
		Saved: time.Duration(st.saved.Load()), Wasted: time.Duration(st.wasted.Load())}
}

// SpeculationConfig is the configuration in force (defaults filled in).
func (m *Manager) SpeculationConfig() SpeculationConfig { return m.spec.cfg }

// deliverSpeculative is stage 7 for a speculative call: the breaker hears
// of it (a provider failing a speculative call is failing), the result is
// cached when ok, and the audit record marks it; no CallEvent, no per-tool
// or outcome counters — it is not a call anybody made.
func (m *Manager) deliverSpeculative(cs *callState, res *Result, err error) (*Result, error) {
	s := m.spec
	res.Outcome = outcomeOf(err)
	if err != nil {
		res.ErrorKind = KindOf(err)
		if errors.Is(err, ErrNotSpeculable) {
			res.ErrorKind = "not_speculable"
		}
	}
	if cs.brk != nil {
		cs.brk.done(cs.wall, cs.reached, cs.verdict())
	}
	if m.cfg.Audit != nil {
		sum := sha256.Sum256(cs.req.Params)
		rec := &audit.Record{
			Time: cs.wall, CallID: res.CallID, Caller: cs.req.Caller, Provider: res.Provider,
			Tool: res.Tool, Version: res.Version, ParamsSHA256: hex.EncodeToString(sum[:]),
			Outcome: string(res.Outcome), Error: res.ErrorKind, LatencyNs: int64(time.Since(cs.start)),
			Speculative: true,
		}
		if aerr := m.cfg.Audit.Append(rec); aerr != nil {
			// Not durable: nothing may be served from it.
			m.log.Error("audit record of a speculative call not durable: result dropped", "call_id", res.CallID, "err", aerr)
			res.Output = nil
			s.stats.failed.Add(1)
			s.stats.wasted.Add(int64(cs.handler))
			return res, errors.Join(err, aerr)
		}
	}
	res.Latency = time.Since(cs.start)
	if err != nil {
		s.stats.failed.Add(1)
		s.stats.wasted.Add(int64(cs.handler))
		return res, err
	}
	s.store(cs, res, m.now())
	return res, nil
}

// WriteSpeculationPrometheus writes the speculation counters in the
// Prometheus text format (nothing when speculation is off).
func (m *Manager) WriteSpeculationPrometheus(w io.Writer) error {
	if !m.spec.cfg.Enabled {
		return nil
	}
	st := m.SpeculationStats()
	_, err := fmt.Fprintf(w, "# HELP airs_speculation_total Speculative calls by what became of them.\n# TYPE airs_speculation_total counter\n"+
		"airs_speculation_total{result=\"started\"} %d\nairs_speculation_total{result=\"refused\"} %d\n"+
		"airs_speculation_total{result=\"failed\"} %d\nairs_speculation_total{result=\"stored\"} %d\n"+
		"airs_speculation_total{result=\"hit\"} %d\nairs_speculation_total{result=\"discarded\"} %d\n"+
		"# HELP airs_speculation_handler_seconds_total Handler time of speculative calls: used (saved) or not (wasted).\n"+
		"# TYPE airs_speculation_handler_seconds_total counter\n"+
		"airs_speculation_handler_seconds_total{kind=\"saved\"} %g\nairs_speculation_handler_seconds_total{kind=\"wasted\"} %g\n",
		st.Started, st.Refused, st.Failed, st.Stored, st.Hits, st.Discards, st.Saved.Seconds(), st.Wasted.Seconds())
	return err
}
