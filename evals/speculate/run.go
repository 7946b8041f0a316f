package speculate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/guard/affinity"
	"github.com/airs-dev/airs/internal/gzfile"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/speculation"
)

// Dataset names the data in the output.
const Dataset = "bfcl_multi_turn"

// The predictors of a run.
const (
	// PredictorOff: no speculation, the latency baseline.
	PredictorOff = "off"
	// PredictorAIRS: the engine's Speculator (recommender suggestions and
	// affinity repeats), as `airs serve` runs it.
	PredictorAIRS = "airs"
	// PredictorOracle speculates exactly the next ground-truth call: the
	// ceiling the sandbox rule, the TTL and write invalidation leave.
	PredictorOracle = "oracle"
)

// Options configure Run; zero values take the defaults in brackets.
type Options struct {
	Data, Functions string
	Service         time.Duration // a handler's service time [5 ms]
	Top             int           // predictions speculated each time [2]
	TTL             time.Duration // a speculative result's life [10 s]
	Predictors      []string      // [off, airs, oracle]
	JSON            bool
}

// Source is one prediction source's share of a run.
type Source struct {
	Speculations int `json:"speculations"`
	Hits         int `json:"hits"`
}

// Result is one predictor's figures.
type Result struct {
	Dataset   string `json:"dataset"`
	Predictor string `json:"predictor"`
	Calls     int    `json:"calls"`
	// Speculable calls are those of read-only, idempotent functions: the
	// only ones a speculation may answer.
	Speculable   int `json:"speculable_calls"`
	Speculations int `json:"speculations"` // speculative calls run ok
	Hits         int `json:"hits"`         // real calls answered from one
	// HitRate: hits / calls; HitRateSpeculable: hits / speculable calls;
	// Used: hits / speculations (the rest is wasted).
	HitRate           float64 `json:"hit_rate"`
	HitRateSpeculable float64 `json:"hit_rate_speculable"`
	Used              float64 `json:"used"`
	Wasted            int     `json:"wasted"`
	// SavedMs: handler time the hits' real calls did not wait for;
	// WastedMs: handler time of the speculations never used.
	SavedMs  float64 `json:"saved_ms"`
	WastedMs float64 `json:"wasted_ms"`
	// Latency of the real calls, end to end through the pipeline.
	MeanLatencyMs float64           `json:"mean_latency_ms"`
	P50LatencyMs  float64           `json:"p50_latency_ms"`
	BySource      map[string]Source `json:"by_source,omitempty"`
	// CallErrors: real calls the pipeline refused or failed (a value
	// BFCL's answer gives that the translated schema rejects); they are
	// replayed all the same, as a live caller would make them.
	CallErrors int `json:"call_errors"`
	// ToolOnly: real calls that missed although the last speculations
	// named their tool — the tool was predicted, its arguments were not.
	ToolOnly    int `json:"tool_only"`
	ParseErrors int `json:"parse_errors,omitempty"`
}

func (o Options) withDefaults() Options {
	if o.Service <= 0 {
		o.Service = 5 * time.Millisecond
	}
	if o.Top <= 0 {
		o.Top = 2
	}
	if o.TTL <= 0 {
		o.TTL = 10 * time.Second
	}
	if len(o.Predictors) == 0 {
		o.Predictors = []string{PredictorOff, PredictorAIRS, PredictorOracle}
	}
	return o
}

// Run replays the conversations once per predictor and writes a table or
// JSON lines to w.
func Run(ctx context.Context, o Options, w io.Writer) ([]Result, error) {
	o = o.withDefaults()
	convs, err := gzfile.ReadJSONLines[Conversation](o.Data)
	if err != nil {
		return nil, err
	}
	funcs, err := gzfile.ReadJSONLines[Function](o.Functions)
	if err != nil {
		return nil, err
	}
	if len(convs) == 0 || len(funcs) == 0 {
		return nil, fmt.Errorf("speculate: no conversations in %s or no functions in %s", o.Data, o.Functions)
	}
	var out []Result
	for _, p := range o.Predictors {
		r, err := replay(ctx, o, p, convs, funcs)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	if o.JSON {
		enc := json.NewEncoder(w)
		for _, r := range out {
			if err := enc.Encode(r); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	fmt.Fprintf(w, "%-8s %6s %10s %6s %6s %8s %8s %6s %9s %9s %9s\n", "method", "calls", "speculable", "specs", "hits", "hit_rate", "hit@spec", "used", "saved_ms", "wasted_ms", "mean_ms")
	for _, r := range out {
		fmt.Fprintf(w, "%-8s %6d %10d %6d %6d %8.3f %8.3f %6.3f %9.1f %9.1f %9.3f\n", r.Predictor, r.Calls, r.Speculable,
			r.Speculations, r.Hits, r.HitRate, r.HitRateSpeculable, r.Used, r.SavedMs, r.WastedMs, r.MeanLatencyMs)
	}
	return out, nil
}

// sink keeps each audit record's speculation link by call id.
type sink struct {
	mu sync.Mutex
	of map[string]string // real call id → the speculative call that answered it
}

func (s *sink) Append(r *audit.Record) error {
	if r.SpeculationOf != "" {
		s.mu.Lock()
		s.of[r.CallID] = r.SpeculationOf
		s.mu.Unlock()
	}
	return nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// world is one predictor's pipeline: every function registered under its
// class as provider, each conversation's caller reaching only its classes.
type world struct {
	m     *pipeline.Manager
	rec   *recommender.Recommender
	spec  *speculation.Speculator
	audit *sink
	clock *clock
}

func build(o Options, pred string, convs []Conversation, funcs []Function) (*world, error) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	service := o.Service
	for _, f := range funcs {
		var params map[string]any
		if err := json.Unmarshal(f.Parameters, &params); err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
		schema, err := bfcl.Translate(params, bfcl.TranslateOptions{})
		if err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
		js, _ := json.Marshal(schema)
		t := pipeline.Tool{Name: f.Name, Version: "1.0.0", Description: f.Description, Parameters: js,
			Trust: pipeline.TL2, LatencyClass: pipeline.Fast,
			ReadOnly: readOnly[f.Name] || readNotIdempotent[f.Name], Idempotent: readOnly[f.Name]}
		h := pipeline.HandlerFunc(func(ctx context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
			tm := time.NewTimer(service)
			defer tm.Stop()
			select {
			case <-tm.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return json.Marshal(map[string]json.RawMessage{"echo": p})
		})
		if err := reg.Register(f.Class, t, h); err != nil {
			return nil, fmt.Errorf("function %s: %w", f.Name, err)
		}
	}
	pol := &pipeline.StaticPolicy{Channels: map[string][]string{}}
	for _, c := range convs {
		pol.Channels[c.ID] = c.Classes
	}
	w := &world{audit: &sink{of: map[string]string{}}, clock: &clock{t: time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)}}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: pol, Audit: w.audit, Now: w.clock.Now,
		Breaker: pipeline.BreakerConfig{Failures: -1},
		Speculation: pipeline.SpeculationConfig{Enabled: pred != PredictorOff, TTL: o.TTL,
			// The replay is sequential: the per-minute budget is the
			// live default, the concurrency bounds never bind.
			MaxInflight: o.Top, IdleBelow: 1}})
	if err != nil {
		return nil, err
	}
	w.m = m
	if pred == PredictorAIRS {
		r, err := recommender.New(recommender.Config{Catalog: &selector.RegistryCatalog{Registry: reg, Policy: pol, Now: w.clock.Now},
			Validate: m.Validate, Now: w.clock.Now})
		if err != nil {
			m.Close()
			return nil, err
		}
		w.rec = r
		w.spec = speculation.New(m, r, affinity.New(affinity.Config{Now: w.clock.Now}), o.Top)
	}
	return w, nil
}

func (w *world) close() {
	if w.spec != nil {
		w.spec.Close()
	}
	if w.rec != nil {
		w.rec.Close()
	}
	w.m.Close()
}

// The replay's clock (see the package doc).
const (
	turnGap = 60 * time.Second
	callGap = 2 * time.Second
)

func replay(ctx context.Context, o Options, pred string, convs []Conversation, funcs []Function) (Result, error) {
	w, err := build(o, pred, convs, funcs)
	if err != nil {
		return Result{}, err
	}
	defer w.close()
	res := Result{Dataset: Dataset, Predictor: pred, BySource: map[string]Source{}}
	source := map[string]string{} // speculative call id → source
	var lat []time.Duration
	var lastRan []speculation.Speculated
	record := func(ran []speculation.Speculated) {
		lastRan = append(lastRan, ran...)
		for _, s := range ran {
			source[s.CallID] = s.Source
			src := res.BySource[s.Source]
			src.Speculations++
			res.BySource[s.Source] = src
		}
	}
	order := map[string][]string{}
	for _, f := range funcs {
		order[f.Name] = ParamOrder(f.Parameters)
	}
	for _, c := range convs {
		caller := c.ID
		var calls [][]Call
		for _, t := range c.Turns {
			var cs []Call
			for _, s := range t.Calls {
				call, err := ParseCall(s, order[CallName(s)])
				if err != nil {
					res.ParseErrors++
					continue
				}
				cs = append(cs, call)
			}
			calls = append(calls, cs)
		}
		for ti, t := range c.Turns {
			w.clock.Advance(turnGap)
			if w.rec != nil {
				w.rec.ObserveTurn(caller, t.User)
				record(w.spec.SpeculateNow(ctx, caller))
			}
			for ci, call := range calls[ti] {
				if pred == PredictorOracle && ci == 0 {
					record(oracle(ctx, w.m, caller, call))
				}
				w.clock.Advance(callGap)
				r, err := w.m.Call(ctx, pipeline.Request{Tool: call.Name, Params: call.Args, Caller: caller})
				res.Calls++
				if readOnly[call.Name] {
					res.Speculable++
				}
				lat = append(lat, r.Latency)
				if !r.SpeculativeHit && slices.ContainsFunc(lastRan, func(s speculation.Speculated) bool { return s.Tool == call.Name }) {
					res.ToolOnly++
				}
				lastRan = lastRan[:0]
				if r.SpeculativeHit {
					res.Hits++
					w.audit.mu.Lock()
					of := w.audit.of[r.CallID]
					w.audit.mu.Unlock()
					src := res.BySource[source[of]]
					src.Hits++
					res.BySource[source[of]] = src
				}
				ev := pipeline.CallEvent{CallID: r.CallID, Caller: caller, Provider: r.Provider, Tool: call.Name,
					Outcome: r.Outcome, ErrorKind: r.ErrorKind, Latency: r.Latency, At: w.clock.Now(), Params: call.Args}
				if err != nil {
					res.CallErrors++
				}
				switch pred {
				case PredictorAIRS:
					w.rec.ObserveCall(ev)
					w.spec.Observe(ev)
					record(w.spec.SpeculateNow(ctx, caller))
				case PredictorOracle:
					if ci+1 < len(calls[ti]) {
						record(oracle(ctx, w.m, caller, calls[ti][ci+1]))
					}
				}
			}
		}
	}
	st := w.m.SpeculationStats()
	res.Speculations = int(st.Stored)
	res.Wasted = res.Speculations - res.Hits
	res.SavedMs = float64(st.Saved) / float64(time.Millisecond)
	res.WastedMs = float64(st.Wasted) / float64(time.Millisecond)
	if res.Calls > 0 {
		res.HitRate = float64(res.Hits) / float64(res.Calls)
	}
	if res.Speculable > 0 {
		res.HitRateSpeculable = float64(res.Hits) / float64(res.Speculable)
	}
	if res.Speculations > 0 {
		res.Used = float64(res.Hits) / float64(res.Speculations)
	}
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	if len(lat) > 0 {
		res.MeanLatencyMs = float64(sum) / float64(len(lat)) / float64(time.Millisecond)
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		res.P50LatencyMs = float64(lat[len(lat)/2]) / float64(time.Millisecond)
	}
	if len(res.BySource) == 0 {
		res.BySource = nil
	}
	return res, nil
}

// oracle speculates exactly call (when the pipeline lets it).
func oracle(ctx context.Context, m *pipeline.Manager, caller string, call Call) []speculation.Speculated {
	r, err := m.Speculate(ctx, pipeline.Request{Tool: call.Name, Params: call.Args, Caller: caller})
	if err != nil {
		return nil
	}
	return []speculation.Speculated{{Prediction: speculation.Prediction{Tool: call.Name, Arguments: call.Args, Source: PredictorOracle}, CallID: r.CallID}}
}
