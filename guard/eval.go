package guard

import (
	"fmt"
	"sort"

	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/guard/anomaly/traffic"
	"github.com/airs-dev/airs/pipeline"
)

// TraceResult is one kind's line of a trace evaluation: the share of its
// calls scoring at or above 0.8, 0.9 and 0.95 (for the normal calls,
// false positives), and for the normal calls the share held (at or above
// the block threshold) overall and for the agent held most.
type TraceResult struct {
	Kind string
	N    int
	At   [3]float64
	// Normal calls only.
	Held         float64
	MostHeld     float64
	MostHeldBy   string
	AgentsJudged int
}

// EvaluateTraces trains a model on the train trace as `airs guard train`
// does (every call counted in its agent's rates, in order), then replays
// the test trace through the scorer the running airs uses
// (AnomalyScorer, its history warmed with the train trace as a restart
// warms it from the audit log), doing with a held call what the running
// airs does: it counts in its agent's rates, and its tool and folders are
// not learned as usual (nobody approves it here). block is the block
// threshold in [0, 1]. It returns the model and one line per kind (a
// burst's line per factor when the trace gives one, "burst-20x"), normal
// last.
func EvaluateTraces(train, test []traffic.TraceLine, block float64) (*anomaly.Model, []TraceResult, error) {
	if len(test) == 0 {
		return nil, nil, fmt.Errorf("guard: the test trace has no calls")
	}
	tr := anomaly.NewTracker()
	calls := make([]anomaly.Features, 0, len(train))
	for i := range train {
		l := &train[i]
		f := anomaly.Features{Caller: l.Agent, Tool: l.Tool, Unix: l.Time.Unix(), ParamSizeBytes: l.ArgsBytes}
		f.SetFolders(l.Args)
		tr.Observe(l.Agent, l.Tool, anomaly.FoldersOfFeatures(&f), l.Time).Apply(&f)
		calls = append(calls, f)
	}
	m, err := anomaly.Train(calls)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (the train trace has %d calls)", err, len(train))
	}
	var h anomaly.Holder
	h.Set(m)
	bt := pipeline.AnomalyThresholdsOf(0.8, 0.9, block)
	sc := NewAnomalyScorer(&h, bt.Block)
	for i := range train { // the warm history: what a restart reads from the audit log
		l := &train[i]
		var f anomaly.Features
		f.SetFolders(l.Args)
		sc.History.Observe(l.Agent, l.Tool, anomaly.FoldersOfFeatures(&f), l.Time)
	}
	lines := map[string]*TraceResult{}
	held, total := map[string]int{}, map[string]int{}
	thresholds := [3]uint8{bt.Warn, bt.Review, bt.Block}
	for i := range test {
		l := &test[i]
		s, _ := sc.ScoreCall(pipeline.CallFeatures{Caller: l.Agent, Tool: l.Tool, At: l.Time, ParamSizeBytes: l.ArgsBytes, Params: l.Args})
		kind := l.Label
		if kind == traffic.LabelBurst && l.Factor > 0 {
			kind = fmt.Sprintf("burst-%gx", l.Factor)
		}
		r := lines[kind]
		if r == nil {
			r = &TraceResult{Kind: kind}
			lines[kind] = r
		}
		r.N++
		for j, t := range thresholds {
			if s >= t {
				r.At[j]++
			}
		}
		if kind == traffic.LabelNormal {
			total[l.Agent]++
			if s >= bt.Block {
				held[l.Agent]++
			}
		}
	}
	var out []TraceResult
	for _, r := range lines {
		for j := range r.At {
			r.At[j] /= float64(r.N)
		}
		if r.Kind == traffic.LabelNormal {
			r.Held = r.At[2]
			r.AgentsJudged = len(total)
			for a, n := range total {
				if f := float64(held[a]) / float64(n); f > r.MostHeld || (f == r.MostHeld && (r.MostHeldBy == "" || a < r.MostHeldBy)) {
					r.MostHeld, r.MostHeldBy = f, a
				}
			}
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Kind == traffic.LabelNormal) != (out[j].Kind == traffic.LabelNormal) {
			return out[j].Kind == traffic.LabelNormal
		}
		return out[i].Kind < out[j].Kind
	})
	return m, out, nil
}
