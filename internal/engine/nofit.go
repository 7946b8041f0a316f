package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// The "no tool fits" measurement: how often no-LLM mode answers "none" to
// requests no tool serves, and how often it refuses requests a built-in
// tool does serve. The threshold it applies (NoLLMMinSimilarity, or
// selection.min_similarity in airs.yaml) is fixed by a rule stated before
// any off-topic request is scored: the NoLLMQuantile-th quantile of the
// best coverage (selector.Coverage) over realistic requests, i.e. a 5% false-refusal
// budget (the rule evals/predict applies to BFCL).

// NoLLMQuantile is the false-refusal budget the threshold is calibrated on.
const NoLLMQuantile = 0.05

// Request is one request of a measurement set; Tool is the tool it is for
// ("" for a request no tool serves).
type Request struct {
	Tool string
	Text string
}

// ReadRequests reads a request set: one request a line, "TOOL<TAB>text" or
// just "text"; blank lines and lines starting with # are skipped.
func ReadRequests(path string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := Request{Text: line}
		if tool, text, ok := strings.Cut(line, "\t"); ok {
			r.Tool, r.Text = strings.TrimSpace(tool), strings.TrimSpace(text)
		}
		if r.Text == "" {
			return nil, fmt.Errorf("%s:%d: a tool and no request", path, n)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no requests", path)
	}
	return out, nil
}

// BestSimilarity is the highest raw (cosine) similarity among a selection's
// candidates (what the threshold is compared with); -1 with none.
func BestSimilarity(sel *selector.Selection) float64 {
	best := -1.0
	if sel == nil {
		return best
	}
	for _, c := range sel.Candidates {
		if s, ok := c.Score[selector.ScoreSimilarity]; ok && s > best {
			best = s
		}
	}
	return best
}

// Quantile is the q-th quantile of xs by the rule evals/predict uses: the
// value at index ⌊q·n⌋ of the sorted values, so that a fraction of about q
// lies strictly below it.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := min(max(int(q*float64(len(s))), 0), len(s)-1)
	return s[i]
}

// Decision is one request's no-LLM outcome.
type Decision struct {
	Request
	Chosen string `json:"chosen"` // grammar.NoneTool for "none"
	// Runnable: the chosen call's arguments were all taken from the
	// request (otherwise the tool fits but nothing would run).
	Runnable   bool    `json:"runnable"`
	Best       string  `json:"best"` // the candidate with the best similarity
	Similarity float64 `json:"similarity"`
	Coverage   float64 `json:"coverage"`
	// BelowThreshold: "none" because no candidate was similar enough
	// (otherwise "none" means no close candidate's arguments could be
	// taken from the request).
	BelowThreshold bool `json:"below_threshold,omitempty"`
	// Ask: nothing was chosen because the user must say something first
	// (the request names a usual folder that is no space, or names several
	// files equally well); Error is what they are told. Such a request is
	// answered, by a question, so it is no refusal; it is counted apart.
	Ask   bool   `json:"ask,omitempty"`
	Error string `json:"error,omitempty"`
}

// NoFitFigures are the measurement's results.
type NoFitFigures struct {
	Threshold  float64 `json:"threshold"`  // selection.min_coverage in force
	Calibrated float64 `json:"calibrated"` // the rule's value on this realistic set
	Rule       string  `json:"rule"`

	Realistic        int     `json:"realistic"`
	RealisticRefused int     `json:"realistic_refused"`
	RefusedRate      float64 `json:"realistic_refused_rate"`
	RealisticRight   int     `json:"realistic_right_tool"`
	// RealisticNotRunnable: a tool was chosen but the request lacks
	// some of its arguments (nothing runs; the user is told which).
	RealisticNotRunnable int `json:"realistic_not_runnable"`
	// RealisticAsked: no tool, the user is asked instead (a missing space,
	// several files named equally well); neither refused nor answered.
	RealisticAsked int `json:"realistic_asked"`

	OffTopic     int     `json:"offtopic"`
	OffTopicNone int     `json:"offtopic_none"`
	NoneRate     float64 `json:"offtopic_none_rate"`

	Refused  []Decision `json:"refused"`         // realistic requests answered "none"
	Answered []Decision `json:"answered"`        // off-topic requests answered with a tool
	Asked    []Decision `json:"asked,omitempty"` // requests answered with a question (Decision.Ask)
}

// Decide selects for each request in no-LLM mode (whatever model the
// engine has), without running anything.
func (e *Engine) Decide(ctx context.Context, caller string, reqs []Request) ([]Decision, error) {
	s := *e.sel
	s.Model = nil
	s.Config.Model = ""
	out := make([]Decision, 0, len(reqs))
	for _, r := range reqs {
		sel, err := s.Select(ctx, caller, r.Text)
		if ask := askOf(err); ask || err != nil && ctx.Err() == nil && sel == nil {
			// A selection's error is its decision: no tool ran. A question
			// to the user is told apart from a failure, which stays "none".
			out = append(out, Decision{Request: r, Chosen: grammar.NoneTool, Similarity: -1, Ask: ask, Error: err.Error()})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("selecting for %q: %w", r.Text, err)
		}
		d := Decision{Request: r, Chosen: sel.Function, Similarity: BestSimilarity(sel), Runnable: sel.Function != grammar.NoneTool && sel.Validation == "ok"}
		for _, c := range sel.Candidates {
			d.Coverage = max(d.Coverage, c.Score[selector.ScoreCoverage])
		}
		for _, c := range sel.Candidates {
			if c.Score[selector.ScoreSimilarity] == d.Similarity {
				d.Best = c.Name
				break
			}
		}
		d.BelowThreshold = sel.Function == grammar.NoneTool && d.Coverage < s.Config.MinCoverage
		out = append(out, d)
	}
	return out, nil
}

// askOf reports whether err is a question to the user rather than a
// failure: the request names a usual folder that is no space, or several
// files equally well.
func askOf(err error) bool {
	var ms *selector.MissingSpaceError
	var amb *selector.AmbiguousError
	return errors.As(err, &ms) || errors.As(err, &amb)
}

// MeasureNoFit runs both sets through no-LLM selection and reports the
// rates, with the threshold the rule gives on the realistic set beside the
// one in force.
func (e *Engine) MeasureNoFit(ctx context.Context, caller string, realistic, offtopic []Request) (*NoFitFigures, error) {
	rd, err := e.Decide(ctx, caller, realistic)
	if err != nil {
		return nil, err
	}
	od, err := e.Decide(ctx, caller, offtopic)
	if err != nil {
		return nil, err
	}
	f := &NoFitFigures{
		Threshold: e.sel.Config.MinCoverage,
		Rule:      fmt.Sprintf("the %g quantile of the best coverage over the realistic requests (a %g%% false-refusal budget), fixed before off-topic requests were scored", NoLLMQuantile, 100*NoLLMQuantile),
		Realistic: len(rd), OffTopic: len(od),
	}
	covs := make([]float64, 0, len(rd))
	for _, d := range rd {
		if d.Ask {
			// Asked, not scored: no coverage was measured.
			f.RealisticAsked++
			f.Asked = append(f.Asked, d)
			continue
		}
		covs = append(covs, d.Coverage)
		if d.Chosen == grammar.NoneTool {
			f.RealisticRefused++
			f.Refused = append(f.Refused, d)
		}
		if d.Tool != "" && d.Chosen == d.Tool {
			f.RealisticRight++
		}
		if d.Chosen != grammar.NoneTool && !d.Runnable {
			f.RealisticNotRunnable++
		}
	}
	f.Calibrated = Quantile(covs, NoLLMQuantile)
	for _, d := range od {
		if d.Ask {
			f.Asked = append(f.Asked, d) // nothing ran: a "none" as the goal counts it
		}
		if d.Chosen == grammar.NoneTool {
			f.OffTopicNone++
		} else {
			f.Answered = append(f.Answered, d)
		}
	}
	f.RefusedRate = float64(f.RealisticRefused) / float64(max(f.Realistic, 1))
	f.NoneRate = float64(f.OffTopicNone) / float64(max(f.OffTopic, 1))
	return f, nil
}
