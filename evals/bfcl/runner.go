package bfcl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/airs-dev/airs/evals/report"
)

// Predictor answers one question: the calls to make (none for "no tool
// fits"). tools are the question's candidate functions as
// ToolSchemas returns them (JSON Schema 2020-12, language-preprocessed for
// the Java and JavaScript categories, where every argument is a string of
// source text).
type Predictor interface {
	Predict(ctx context.Context, q Question, tools []ToolSchemaJSON) ([]Call, error)
}

// PredictorFunc adapts a function to Predictor.
type PredictorFunc func(ctx context.Context, q Question, tools []ToolSchemaJSON) ([]Call, error)

// Predict calls f.
func (f PredictorFunc) Predict(ctx context.Context, q Question, tools []ToolSchemaJSON) ([]Call, error) {
	return f(ctx, q, tools)
}

// Options configure Run.
type Options struct {
	DataDir    string
	Categories []string // empty: every single-turn category present in DataDir
	Predictor  Predictor
	Limit      int // questions per category; 0 = all
}

// Failure is one question answered wrongly, kept for the report.
type Failure struct {
	ID        string
	ErrorType string
	Reason    string
	Calls     []Call
}

// CategoryResult is one category's score. Its JSON form is exactly the line
// `{"category":…,"n":N,"function_acc":x,"ast_acc":x}`; the rest is for
// reports.
type CategoryResult struct {
	Category string `json:"category"`
	N        int    `json:"n"`
	// FunctionAcc counts a question right when the set of called function
	// names equals the expected set (for relevance categories: the
	// relevance verdict itself).
	FunctionAcc float64 `json:"function_acc"`
	// ASTAcc applies the full checker.
	ASTAcc float64 `json:"ast_acc"`

	Calls         int             `json:"-"` // calls produced
	ValidCalls    int             `json:"-"` // of which valid for their tool's JSON Schema
	PredictErrors int             `json:"-"` // Predict returned an error (scored wrong)
	Latencies     []time.Duration `json:"-"` // one per question
	ErrorTypes    map[string]int  `json:"-"`
	Failures      []Failure       `json:"-"` // the first MaxFailuresKept
	FunctionRight []bool          `json:"-"` // per question, in file order
	ASTRight      []bool          `json:"-"`
	QuestionIDs   []string        `json:"-"`
	SchemaErrors  []string        `json:"-"` // translated schemas that failed to compile (should stay empty)
}

// MaxFailuresKept bounds CategoryResult.Failures.
const MaxFailuresKept = 20

// ValidityRate is the fraction of produced calls whose arguments validate
// against the tool's translated schema (1 when no call was produced).
func (r CategoryResult) ValidityRate() float64 {
	if r.Calls == 0 {
		return 1
	}
	return float64(r.ValidCalls) / float64(r.Calls)
}

// JSONLine renders the result as its one JSON line (no newline).
func (r CategoryResult) JSONLine() []byte {
	b, _ := json.Marshal(struct {
		Category    string  `json:"category"`
		N           int     `json:"n"`
		FunctionAcc float64 `json:"function_acc"`
		ASTAcc      float64 `json:"ast_acc"`
	}{r.Category, r.N, r.FunctionAcc, r.ASTAcc})
	return b
}

// FunctionNamesRight reports whether the calls name the expected functions:
// set equality of names (for relevance categories, the relevance verdict).
func FunctionNamesRight(q Question, calls []Call, category string) bool {
	if IsRelevanceCategory(category) {
		return Check(q, calls, category).OK
	}
	got := map[string]bool{}
	for _, c := range calls {
		got[c.Name] = true
	}
	want := map[string]bool{}
	for _, e := range q.GroundTruth {
		want[e.Name] = true
	}
	if len(got) != len(want) {
		return false
	}
	for n := range want {
		if !got[n] {
			return false
		}
	}
	return true
}

// Run loads each category, asks the predictor every question and scores the
// answers. Progress goes to progress (a bar on a terminal, lines otherwise;
// nil for none). A predictor error scores the question wrong; a cancelled
// ctx stops the run with ctx.Err().
func Run(ctx context.Context, opt Options, progress io.Writer) ([]CategoryResult, error) {
	if opt.Predictor == nil {
		return nil, errors.New("bfcl: no predictor")
	}
	cats := opt.Categories
	if len(cats) == 0 {
		var err error
		if cats, err = AvailableCategories(opt.DataDir); err != nil {
			return nil, err
		}
	}
	data := make([][]Question, len(cats))
	total := 0
	for i, c := range cats {
		path, err := FindCategoryFile(opt.DataDir, c)
		if err != nil {
			return nil, err
		}
		qs, err := LoadFile(path)
		if err != nil {
			return nil, err
		}
		if opt.Limit > 0 && len(qs) > opt.Limit {
			qs = qs[:opt.Limit]
		}
		data[i] = qs
		total += len(qs)
	}
	prog := report.NewProgress(progress, "bfcl", total)
	defer prog.Done()
	results := make([]CategoryResult, 0, len(cats))
	for i, cat := range cats {
		r, err := runCategory(ctx, cat, data[i], opt.Predictor, prog)
		if err != nil {
			return results, err
		}
		results = append(results, r)
	}
	return results, nil
}

func runCategory(ctx context.Context, cat string, qs []Question, p Predictor, prog *report.Progress) (CategoryResult, error) {
	r := CategoryResult{Category: cat, N: len(qs), ErrorTypes: map[string]int{}}
	fnRight, astRight := 0, 0
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		q.Category = cat
		tools, err := ToolSchemas(q)
		if err != nil {
			return r, err
		}
		start := time.Now()
		calls, perr := p.Predict(ctx, q, tools)
		r.Latencies = append(r.Latencies, time.Since(start))
		var res Result
		fn := false
		if perr != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return r, ctxErr
			}
			r.PredictErrors++
			res = fail("predict_error", "predictor: %v", perr)
		} else {
			res = Check(q, calls, cat)
			fn = FunctionNamesRight(q, calls, cat)
			r.countValidity(tools, calls)
		}
		if fn {
			fnRight++
		}
		if res.OK {
			astRight++
		} else {
			r.ErrorTypes[res.ErrorType]++
			if len(r.Failures) < MaxFailuresKept {
				r.Failures = append(r.Failures, Failure{ID: q.ID, ErrorType: res.ErrorType, Reason: res.Reason, Calls: calls})
			}
		}
		r.FunctionRight = append(r.FunctionRight, fn)
		r.ASTRight = append(r.ASTRight, res.OK)
		r.QuestionIDs = append(r.QuestionIDs, q.ID)
		prog.Add(1)
	}
	if r.N > 0 {
		r.FunctionAcc = float64(fnRight) / float64(r.N)
		r.ASTAcc = float64(astRight) / float64(r.N)
	}
	return r, nil
}

// countValidity validates each call's arguments against its tool's schema.
func (r *CategoryResult) countValidity(tools []ToolSchemaJSON, calls []Call) {
	for _, c := range calls {
		r.Calls++
		i := slices.IndexFunc(tools, func(t ToolSchemaJSON) bool { return t.Name == c.Name })
		if i < 0 {
			continue
		}
		s, err := CompileSchema(tools[i].Parameters)
		if err != nil {
			r.SchemaErrors = append(r.SchemaErrors, fmt.Sprintf("%s: %v", c.Name, err))
			continue
		}
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		if ValidateArgs(s, args) == nil {
			r.ValidCalls++
		}
	}
}

// Overall returns the question-weighted totals over results, as a
// CategoryResult named "overall".
func Overall(results []CategoryResult) CategoryResult {
	o := CategoryResult{Category: "overall", ErrorTypes: map[string]int{}}
	var fn, ast float64
	for _, r := range results {
		o.N += r.N
		fn += r.FunctionAcc * float64(r.N)
		ast += r.ASTAcc * float64(r.N)
		o.Calls += r.Calls
		o.ValidCalls += r.ValidCalls
		o.PredictErrors += r.PredictErrors
		o.Latencies = append(o.Latencies, r.Latencies...)
		for k, v := range r.ErrorTypes {
			o.ErrorTypes[k] += v
		}
	}
	if o.N > 0 {
		o.FunctionAcc, o.ASTAcc = fn/float64(o.N), ast/float64(o.N)
	}
	return o
}

// topErrorTypes returns error types by count, most frequent first.
func topErrorTypes(m map[string]int, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}
