package predict

import (
	"bytes"
	"context"
	"fmt"
	"go/format"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"

	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// Learning selector.DefaultFitModel, the "does this candidate fit the
// request" decision of no-LLM mode, from BFCL, on a split kept apart from
// what EVALS.md reports on.

// FitTrainCategories are the categories the fit model learns from: the
// relevant ones with one request per question (their right function fits,
// the other candidates do not) and irrelevance (no candidate fits). Only
// the training half of each (InFitTraining) is read. The parallel
// categories are left out: a request there is several requests in one,
// which the decision is not asked about (Predict asks it once, of the
// whole, and not of its clauses).
var FitTrainCategories = []string{"simple_python", "simple_java", "simple_javascript", "multiple", "live_simple", "live_multiple", "irrelevance"}

var reQuestionNumber = regexp.MustCompile(`_(\d+)(?:-|$)`)

// InFitTraining reports whether a question is in the fit model's training
// half: its number (irrelevance_12, live_multiple_12-3-4) is even. The odd
// half of every category, and every live_irrelevance question, are held
// out.
func InFitTraining(id string) bool {
	m := reQuestionNumber.FindStringSubmatch(id)
	if m == nil {
		return false
	}
	n, err := strconv.Atoi(m[1])
	return err == nil && n%2 == 0
}

// FitExample is one candidate of one question, with its features and
// whether it is the question's right function.
type FitExample struct {
	ID, Category, Candidate string
	X                       [selector.NumFitFeatures]float64
	Fits                    bool
}

// FitExamples are the examples of one question: the best-ranked
// candidate that the checks before the fit decision let through (the
// similarity floor, understand.Unfilled), labelled by whether it is the
// function the question expects — the decision as no-LLM mode first meets
// it. None when every candidate is refused before.
func (p *NoLLM) FitExamples(ctx context.Context, q bfcl.Question) ([]FitExample, error) {
	tools, err := bfcl.ToolSchemas(q)
	if err != nil {
		return nil, err
	}
	cat := entriesOf(tools)
	ix, err := questionIndex(ctx, cat, p.pool)
	if err != nil {
		return nil, err
	}
	sel := selector.New(selector.Parts{Catalog: cat, Index: ix, Config: selector.Config{TopK: len(cat), MinSimilarity: -2, Fit: selector.NoFitOff}})
	text := Unquoted(q.Text()) // as Predict reads it
	s, err := sel.Select(ctx, caller, text)
	if err != nil {
		return nil, err
	}
	right := map[string]bool{}
	for _, g := range q.GroundTruth {
		right[g.Name] = true
	}
	byName := map[string]selector.Entry{}
	for _, e := range cat {
		byName[e.Tool.Name] = e
	}
	var out []FitExample
	for i, c := range s.Candidates {
		t := byName[c.Name].Tool
		if c.Score[selector.ScoreSimilarity] < p.minSimilarity && !understand.AsksKind(text, c.Name) || understand.Unfilled(text, t.Parameters) != "" {
			continue // refused before the fit model is asked (Predict)
		}
		out = append(out, FitExample{ID: q.ID, Category: q.Category, Candidate: c.Name,
			X: selector.FitFeatures(text, s.Candidates, i, t), Fits: right[c.Name]})
		break // the first candidate the decision is asked about
	}
	return out, nil
}

// LoadFitExamples reads the examples of the given categories' questions
// that keep says to keep.
func (p *NoLLM) LoadFitExamples(ctx context.Context, dir string, categories []string, keep func(id string) bool) ([]FitExample, error) {
	var out []FitExample
	for _, c := range categories {
		path, err := bfcl.FindCategoryFile(dir, c)
		if err != nil {
			return nil, err
		}
		qs, err := bfcl.LoadFile(path)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			if !keep(q.ID) {
				continue
			}
			ex, err := p.FitExamples(ctx, q)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", q.ID, err)
			}
			out = append(out, ex...)
		}
	}
	return out, nil
}

// TrainFit fits the logistic model's weights by Newton's method
// (iteratively reweighted least squares) with an L2 penalty l2 on the
// weights (not the bias), each class weighted to count as much as the
// other. It is deterministic. The threshold is left at 0 (ChooseThreshold).
func TrainFit(ex []FitExample, l2 float64) selector.FitModel {
	const n = fitDim
	var pos, neg float64
	for _, e := range ex {
		if e.Fits {
			pos++
		} else {
			neg++
		}
	}
	wPos, wNeg := 1.0, 1.0
	if pos > 0 && neg > 0 {
		wPos, wNeg = (pos+neg)/(2*pos), (pos+neg)/(2*neg)
	}
	var beta [n]float64
	row := func(e FitExample) [n]float64 {
		var r [n]float64
		r[0] = 1
		copy(r[1:], e.X[:])
		return r
	}
	for iter := 0; iter < 50; iter++ {
		var g [n]float64
		var h [n][n]float64
		for _, e := range ex {
			r := row(e)
			z := 0.0
			for i := range r {
				z += beta[i] * r[i]
			}
			pr := 1 / (1 + math.Exp(-z))
			y, w := 0.0, wNeg
			if e.Fits {
				y, w = 1, wPos
			}
			for i := range r {
				g[i] += w * (pr - y) * r[i]
				for j := range r {
					h[i][j] += w * pr * (1 - pr) * r[i] * r[j]
				}
			}
		}
		for i := 1; i < n; i++ {
			g[i] += l2 * beta[i]
			h[i][i] += l2
		}
		h[0][0] += 1e-9
		step := solve(h, g)
		change := 0.0
		for i := range beta {
			beta[i] -= step[i]
			change = max(change, math.Abs(step[i]))
		}
		if change < 1e-9 {
			break
		}
	}
	m := selector.FitModel{Bias: beta[0]}
	copy(m.Weights[:], beta[1:])
	return m
}

// fitDim is the size of the model's parameter vector: the bias, then the
// weights.
const fitDim = selector.NumFitFeatures + 1

// solve solves h·x = g by Gaussian elimination with partial pivoting.
func solve(h [fitDim][fitDim]float64, g [fitDim]float64) [fitDim]float64 {
	var x [fitDim]float64
	a, b := h, g
	for c := 0; c < len(b); c++ {
		p := c
		for r := c + 1; r < len(b); r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		if a[c][c] == 0 {
			continue
		}
		for r := c + 1; r < len(b); r++ {
			f := a[r][c] / a[c][c]
			for k := c; k < len(b); k++ {
				a[r][k] -= f * a[c][k]
			}
			b[r] -= f * b[c]
		}
	}
	for c := len(b) - 1; c >= 0; c-- {
		if a[c][c] == 0 {
			continue
		}
		s := b[c]
		for k := c + 1; k < len(b); k++ {
			s -= a[c][k] * x[k]
		}
		x[c] = s / a[c][c]
	}
	return x
}

// WriteFitModel writes m as the Go source of selector.DefaultFitModel,
// gofmt'd: CI refuses a committed file gofmt would rewrite.
func WriteFitModel(w io.Writer, m selector.FitModel, how string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s; DO NOT EDIT.\n\npackage selector\n\n// DefaultFitModel is the model no-LLM mode decides \"does this candidate\n// fit\" with (Config.Fit nil), learned by evals/predict.TrainFit.\nvar DefaultFitModel = FitModel{\n\tBias: %v,\n\tWeights: [NumFitFeatures]float64{\n", how, m.Bias)
	for i, v := range m.Weights {
		fmt.Fprintf(&b, "\t\t%v, // %s\n", v, selector.FitFeatureNames[i])
	}
	fmt.Fprintf(&b, "\t},\n\tThreshold: %v,\n}\n", m.Threshold)
	src, err := format.Source(b.Bytes())
	if err != nil {
		return err
	}
	_, err = w.Write(src)
	return err
}

// FitL2 is the L2 penalty DefaultFitModel is trained with.
const FitL2 = 1.0

// FitRefusalBudget is the share of the training half's right functions
// the fit decision may refuse: the threshold is that quantile of their
// probabilities, a false-refusal budget stated in advance (as
// DefaultMinSimilarity's 5%), not a figure searched on irrelevance.
const FitRefusalBudget = 0.01

// ChooseThreshold is the budget-quantile of m's probability over the
// examples that fit.
func ChooseThreshold(m selector.FitModel, ex []FitExample, budget float64) float64 {
	var ps []float64
	for _, e := range ex {
		if e.Fits {
			ps = append(ps, m.Prob(e.X))
		}
	}
	if len(ps) == 0 {
		return 0
	}
	sort.Float64s(ps)
	i := min(max(int(budget*float64(len(ps))), 0), len(ps)-1)
	return ps[i]
}

// TrainDefaultFit learns selector.DefaultFitModel from the BFCL data in
// dir: the training half (InFitTraining) of FitTrainCategories, under the
// eval's own predictor (pool-fitted embedder, DefaultMinSimilarity),
// FitL2, and the FitRefusalBudget threshold.
func TrainDefaultFit(ctx context.Context, dir string) (selector.FitModel, int, error) {
	pool, err := PoolTexts(dir)
	if err != nil {
		return selector.FitModel{}, 0, err
	}
	p, err := NewNoLLM(ctx, Options{Pool: pool, MinSimilarity: DefaultMinSimilarity})
	if err != nil {
		return selector.FitModel{}, 0, err
	}
	ex, err := p.LoadFitExamples(ctx, dir, FitTrainCategories, InFitTraining)
	if err != nil {
		return selector.FitModel{}, 0, err
	}
	m := TrainFit(ex, FitL2)
	m.Threshold = ChooseThreshold(m, ex, FitRefusalBudget)
	return m, len(ex), nil
}
