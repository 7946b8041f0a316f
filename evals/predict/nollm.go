package predict

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// DefaultMinSimilarity is the no-LLM irrelevance threshold: when the best
// candidate's dense similarity to the request (cosine of the lexical
// embeddings under the pool-fitted basis, see Options.Pool) is below it, the
// predictor answers "no call". It was chosen on a stated false-refusal
// budget, not on the irrelevance sets: it is the 5th percentile of the best
// candidate's similarity over the 1,518 questions that do have a right tool
// in simple_python, multiple, live_simple and live_multiple (Calibrate with
// quantile 0.05 gave 0.204), so about 5% of answerable questions are
// refused. EVALS.md reports what it does on the irrelevance categories. It
// is meaningless without a pool (a basis fitted on a question's two to five
// candidates inflates every similarity).
const DefaultMinSimilarity = 0.20

// NoLLM is the "none" predictor: AIRS's no-LLM path over each question's
// own candidates.
type NoLLM struct {
	pool          *embeddings.Lexical // nil: fit per question
	minSimilarity float64
	fit           *selector.FitModel // Options.Fit
	parallel      bool
}

// NewNoLLM fits the pool embedder (when o.Pool is given) and returns the
// predictor.
func NewNoLLM(ctx context.Context, o Options) (*NoLLM, error) {
	p := &NoLLM{minSimilarity: o.MinSimilarity, fit: o.Fit, parallel: o.Parallel}
	if len(o.Pool) > 0 {
		lx := embeddings.NewLexical(embeddings.LexicalOptions{})
		if err := lx.Fit(ctx, o.Pool); err != nil {
			return nil, fmt.Errorf("fitting the lexical embedder on the pool: %w", err)
		}
		p.pool = lx
	}
	return p, nil
}

// PoolTexts returns the texts the pool embedder is fitted on: every distinct
// function of every category in dir, in the form the index embeds.
func PoolTexts(dir string) ([]string, error) {
	cats, err := bfcl.AvailableCategories(dir)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, c := range cats {
		path, err := bfcl.FindCategoryFile(dir, c)
		if err != nil {
			return nil, err
		}
		qs, err := bfcl.LoadFile(path)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			tools, err := bfcl.ToolSchemas(q)
			if err != nil {
				return nil, err
			}
			for _, d := range selector.Docs(entriesOf(tools)) {
				t := DenseText(d)
				if !seen[t] {
					seen[t] = true
					out = append(out, t)
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// DenseText is the text the index embeds for a document (embeddings.Index
// embeds the name's words, then Doc.Text).
func DenseText(d embeddings.Doc) string {
	return strings.Join(embeddings.Tokens(d.Name), " ") + ". " + d.Text()
}

// fitFor is the selector's fit model for a run whose MinSimilarity is
// minSim: none when refusing is off.
func (p *NoLLM) fitFor(minSim float64) *selector.FitModel {
	if minSim < -1 {
		return selector.NoFitOff
	}
	return p.fit
}

// selectorFor builds the selector over the question's candidates.
func (p *NoLLM) selectorFor(ctx context.Context, cat toolsCatalog, minSim float64) (*selector.Selector, error) {
	ix, err := questionIndex(ctx, cat, p.pool)
	if err != nil {
		return nil, err
	}
	return selector.New(selector.Parts{
		Catalog: cat,
		Index:   ix,
		Config:  selector.Config{TopK: len(cat), MinSimilarity: minSim, Fit: p.fitFor(minSim)},
	}), nil
}

// Predict implements bfcl.Predictor.
func (p *NoLLM) Predict(ctx context.Context, q bfcl.Question, tools []bfcl.ToolSchemaJSON) ([]bfcl.Call, error) {
	cat := entriesOf(tools)
	minSim := p.minSimilarity
	if minSim < 0 {
		minSim = -2 // cosine ≥ −1: never refuse
	}
	sel, err := p.selectorFor(ctx, cat, minSim)
	if err != nil {
		return nil, err
	}
	text := Unquoted(q.Text())
	s, err := sel.Select(ctx, caller, text)
	if err != nil {
		return nil, err
	}
	if p.minSimilarity >= 0 && Unfillable(cat, s.Function, text) != "" {
		// The tool cannot be called with the request's own values.
		return nil, nil
	}
	calls, err := callsOf(s)
	if err != nil || len(calls) == 0 || !p.parallel || !isParallel(q.Category) {
		return calls, err
	}
	// Parallel categories: one call per clause of the request that selects
	// a tool and carries evidence for its arguments (something other than
	// what the extractor fills in from no text at all). Whether a tool fits
	// was decided on the whole request, above; a clause is a part of it,
	// not a request of its own, so it is not asked again.
	sel.Config.Fit = selector.NoFitOff
	var out []bfcl.Call
	for _, clause := range Clauses(text) {
		cs, err := sel.Select(ctx, caller, clause)
		if err != nil {
			return nil, err
		}
		c, err := callsOf(cs)
		if err != nil || len(c) == 0 {
			continue
		}
		if !hasEvidence(cat, c[0]) || containsCall(out, c[0]) {
			continue
		}
		out = append(out, c[0])
	}
	if len(out) == 0 {
		return calls, nil
	}
	return out, nil
}

// Unquoted is a request that is one quoted string from end to end read
// as what it quotes: some BFCL files (parallel, parallel_multiple) wrap
// whole requests in double quotes, which would otherwise make the request
// one quoted value (selector.Delexicalize) with no words to match a tool.
func Unquoted(text string) string {
	t := strings.TrimSpace(text)
	if len(t) >= 2 && t[0] == '"' && t[len(t)-1] == '"' && !strings.Contains(t[1:len(t)-1], `"`) {
		return strings.TrimSpace(t[1 : len(t)-1])
	}
	return text
}

// Unfillable names a required parameter of the named tool that the
// request cannot fill with a value of the right type from its own words
// ("" when every one can): understand.Unfilled, the check the selector
// itself makes (Config.RequireEvidence) before it proposes a call.
func Unfillable(cat toolsCatalog, name, text string) string {
	for _, e := range cat {
		if e.Tool.Name == name {
			return understand.Unfilled(text, e.Tool.Parameters)
		}
	}
	return ""
}

// BestSimilarity is the dense similarity of the best-ranked candidate (for
// Calibrate).
func (p *NoLLM) BestSimilarity(ctx context.Context, q bfcl.Question, tools []bfcl.ToolSchemaJSON) (float64, error) {
	sel, err := p.selectorFor(ctx, entriesOf(tools), -2)
	if err != nil {
		return 0, err
	}
	s, err := sel.Select(ctx, caller, q.Text())
	if err != nil {
		return 0, err
	}
	if len(s.Candidates) == 0 {
		return 0, nil
	}
	return s.Candidates[0].Score["similarity"], nil
}

var reClauseSplit = regexp.MustCompile(`(?i)(?:[.;?!]\s+|,?\s+and\s+(?:also\s+|then\s+)?|,\s+(?:also\s+|then\s+)?|\s+then\s+|\n+)`)

// Clauses splits a request into clauses at sentence ends, semicolons,
// commas and "and". Short fragments (fewer than two words) are glued to the
// clause before them.
func Clauses(text string) []string {
	parts := reClauseSplit.Split(text, -1)
	var out []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if len(strings.Fields(p)) < 2 && len(out) > 0 {
			out[len(out)-1] += " " + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// hasEvidence reports whether the call's arguments differ from what the
// extractor produces from an empty request (its type-zero fill-ins).
func hasEvidence(cat toolsCatalog, c bfcl.Call) bool {
	for _, e := range cat {
		if e.Tool.Name != c.Name {
			continue
		}
		empty, err := selector.ExtractArguments(e.Tool.Parameters, "", selector.Hints{})
		if err != nil {
			return false
		}
		b, _ := json.Marshal(empty)
		var norm map[string]any
		_ = json.Unmarshal(b, &norm)
		b2, _ := json.Marshal(c.Args)
		var got map[string]any
		_ = json.Unmarshal(b2, &got)
		return !reflect.DeepEqual(norm, got)
	}
	return false
}

func containsCall(calls []bfcl.Call, c bfcl.Call) bool {
	b, _ := json.Marshal(c)
	for _, o := range calls {
		if ob, _ := json.Marshal(o); string(ob) == string(b) {
			return true
		}
	}
	return false
}

// Calibrate returns the q-quantile (e.g. 0.05) of the best candidate's
// similarity over questions that have a right tool: the threshold that
// refuses about that fraction of them.
func Calibrate(ctx context.Context, p *NoLLM, qs []bfcl.Question, quantile float64) (float64, error) {
	var sims []float64
	for _, q := range qs {
		if len(q.GroundTruth) == 0 {
			continue
		}
		tools, err := bfcl.ToolSchemas(q)
		if err != nil {
			return 0, err
		}
		s, err := p.BestSimilarity(ctx, q, tools)
		if err != nil {
			return 0, err
		}
		sims = append(sims, s)
	}
	if len(sims) == 0 {
		return 0, fmt.Errorf("predict: no relevant questions to calibrate on")
	}
	sort.Float64s(sims)
	i := int(quantile * float64(len(sims)))
	i = min(max(i, 0), len(sims)-1)
	return sims[i], nil
}
