// Package speculation predicts the calls a caller is likely to make next
// and runs them ahead of time through pipeline.Manager.Speculate, which
// enforces the sandbox rule and the budget. internal/engine wires it when
// guard.speculation is on; evals/speculate measures it.
package speculation

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/airs-dev/airs/guard/affinity"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// The predictor: after each delivered call, the calls the
// caller is likely to make next are run ahead of time through
// pipeline.Manager.Speculate, which enforces the sandbox rule (read-only,
// idempotent tools only, as the caller, every check) and the budget; a
// matching real call is then answered from the result.
//
// Two sources, both with arguments (a speculation needs the exact call):
//
//   - the recommender's live suggestions for the caller (Peek): the tool
//     and the arguments it filled and the schema stage checked, scored by
//     the fused probability p;
//   - affinity repeats: for a tool the caller has affinity with (windowed
//     counts over the threshold, guard/affinity), the last arguments the
//     caller used with it, scored by the tool's share s of the caller's
//     affine calls, halved (a repeat with the very same arguments is a
//     narrower guess than the tool).
//
// A suggestion whose tool has affinity is ranked up by the same share,
// p·(1+s). These weights are priors chosen before any measurement, not
// fitted; EVALS.md ("Speculative execution") has the hit rate they give.

// SpeculationSource names where a prediction came from.
const (
	SourceRecommender = "recommender"
	SourceAffinity    = "affinity"
)

// Prediction is one predicted next call.
type Prediction struct {
	Tool      string
	Provider  string
	Arguments json.RawMessage
	Score     float64
	Source    string
}

// Speculator predicts the next calls and speculates on them.
type Speculator struct {
	Manager *pipeline.Manager
	// Recommender is the suggestions' source; nil: affinity repeats only.
	Recommender *recommender.Recommender
	// Affinity counts (caller, tool); New makes one when nil.
	Affinity *affinity.Tracker
	// Top predictions are speculated after each call [2].
	Top int

	mu     sync.Mutex
	last   map[affinity.Pair]json.RawMessage // each caller's last args per tool
	closed bool                              // under mu: After starts nothing once Close began
	wg     sync.WaitGroup
	ctx    context.Context
	stop   context.CancelFunc
}

// maxLast bounds the remembered arguments: past it, the map starts afresh.
const maxLast = 4096

// New returns a Speculator over m (and r, when not nil).
func New(m *pipeline.Manager, r *recommender.Recommender, aff *affinity.Tracker, top int) *Speculator {
	if aff == nil {
		aff = affinity.New(affinity.Config{})
	}
	if top <= 0 {
		top = 2
	}
	s := &Speculator{Manager: m, Recommender: r, Affinity: aff, Top: top, last: map[affinity.Pair]json.RawMessage{}}
	s.ctx, s.stop = context.WithCancel(context.Background())
	return s
}

// Observe takes one delivered call: affinity counts and the caller's last
// arguments for the tool. Only ok calls count (a failed call says little
// about what comes next), and only real ones (speculative calls publish no
// event).
func (s *Speculator) Observe(ev pipeline.CallEvent) {
	if ev.Outcome != pipeline.OutcomeOK || ev.Caller == "" {
		return
	}
	s.Affinity.Observe(ev.Caller, ev.Tool, ev.At)
	if ev.Params == nil {
		return
	}
	s.mu.Lock()
	if len(s.last) >= maxLast {
		clear(s.last)
	}
	s.last[affinity.Pair{Caller: ev.Caller, Tool: ev.Tool}] = ev.Params
	s.mu.Unlock()
}

// speculable reports whether tool may run speculatively: every provider's
// highest version read-only and idempotent (the pipeline checks again; this
// only keeps the top slots for calls it would accept).
func (s *Speculator) speculable(tool string) bool {
	ps := s.Manager.Registry().Providers(tool)
	if len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		if !p.Tool.ReadOnly || !p.Tool.Idempotent || p.Tool.Destructive {
			return false
		}
	}
	return true
}

// Predict ranks the caller's predicted next calls, best first, speculable
// tools only, one per distinct call.
func (s *Speculator) Predict(caller string) []Prediction {
	share := map[string]float64{}
	total := 0
	var affine []affinity.Affinity
	for _, a := range s.Affinity.Affinities() {
		if a.Caller == caller {
			affine = append(affine, a)
			total += a.Count
		}
	}
	for _, a := range affine {
		share[a.Tool] = float64(a.Count) / float64(total)
	}
	var out []Prediction
	seen := map[string]bool{}
	add := func(p Prediction) {
		k := p.Tool + "\x00" + canonicalArgs(p.Arguments)
		if seen[k] || !s.speculable(p.Tool) {
			return
		}
		seen[k] = true
		out = append(out, p)
	}
	if s.Recommender != nil {
		for _, rec := range s.Recommender.Peek(caller) {
			if rec.Destructive || !rec.Idempotent {
				continue
			}
			add(Prediction{Tool: rec.Tool, Provider: rec.Provider, Arguments: rec.Arguments,
				Score: rec.Score * (1 + share[rec.Tool]), Source: SourceRecommender})
		}
	}
	s.mu.Lock()
	for _, a := range affine {
		if args, ok := s.last[a.Pair]; ok {
			add(Prediction{Tool: a.Tool, Arguments: args, Score: share[a.Tool] / 2, Source: SourceAffinity})
		}
	}
	s.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// canonicalArgs is the arguments with object keys sorted, so that one call
// written two ways is one prediction.
func canonicalArgs(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	c, _ := json.Marshal(v)
	return string(c)
}

// After observes ev and speculates the caller's top predictions in the
// background (the pipeline refuses what its budget does not allow).
func (s *Speculator) After(ev pipeline.CallEvent) {
	s.Observe(ev)
	if ev.Outcome != pipeline.OutcomeOK {
		return
	}
	preds := s.Predict(ev.Caller)
	if len(preds) > s.Top {
		preds = preds[:s.Top]
	}
	// wg.Add under mu, checked against closed: an Add racing Close's Wait
	// is a data race on the WaitGroup (the Run goroutine may be delivering
	// one last event while Close runs).
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	for _, p := range preds {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			_, _ = s.Manager.Speculate(s.ctx, s.request(ev.Caller, p))
		}()
	}
}

func (s *Speculator) request(caller string, p Prediction) pipeline.Request {
	return pipeline.Request{Tool: p.Tool, Provider: p.Provider, Params: p.Arguments, Caller: caller}
}

// Speculated is a prediction the pipeline ran, with the speculative
// call's id (what a hit's audit record names).
type Speculated struct {
	Prediction
	CallID string
}

// SpeculateNow speculates the caller's top predictions synchronously and
// returns those the pipeline ran ok (for the evaluation, which needs them
// done before the next real call).
func (s *Speculator) SpeculateNow(ctx context.Context, caller string) []Speculated {
	preds := s.Predict(caller)
	if len(preds) > s.Top {
		preds = preds[:s.Top]
	}
	var ran []Speculated
	for _, p := range preds {
		if res, err := s.Manager.Speculate(ctx, s.request(caller, p)); err == nil {
			ran = append(ran, Speculated{Prediction: p, CallID: res.CallID})
		}
	}
	return ran
}

// Run follows sub when there is no recommender to call After (with one,
// the recommender's Run calls it once it has seen the call).
func (s *Speculator) Run(sub *pipeline.Subscription) {
	for {
		select {
		case <-s.ctx.Done():
			return
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			s.After(ev)
		}
	}
}

// Close cancels the speculations running and waits for them.
func (s *Speculator) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.stop()
	s.wg.Wait()
}
