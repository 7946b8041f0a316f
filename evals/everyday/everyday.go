// Package everyday measures how no-LLM mode plans the requests a person
// types every day — arithmetic in words, files named loosely, pasted text
// to summarize, two files to compare, a folder's every file, deletions,
// requests to outside (MCP-style) tools, requests no tool serves — against
// the plan the person meant, in a fixture home (testdata/home). A plan is
// right when it has the expected steps, in order, each with the expected
// tool, arguments and foreach (a calculator expression is compared by its
// value); when it answers with the expected choices (several files named
// equally well); or when it fails with the expected kind of error (a file
// that is nowhere, a space that does not exist). Nothing runs.
package everyday

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// Step is one call of a plan.
type Step struct {
	Tool    string         `json:"tool"`
	Args    map[string]any `json:"args"`
	Foreach string         `json:"foreach,omitempty"`
	// Destructive is set on outcomes: the tool deletes or overwrites.
	Destructive bool `json:"destructive,omitempty"`
}

// Case is one request with the plan a person meant. No steps, choices or
// error: no tool fits.
type Case struct {
	Kind    string   `json:"kind"`
	Q       string   `json:"q"`
	Steps   []Step   `json:"steps,omitempty"`
	Choices []string `json:"choices,omitempty"` // "space:path", in any order
	Error   string   `json:"error,omitempty"`   // ErrNotFound or ErrSpaceMissing
}

// The kinds of error a case may expect.
const (
	ErrNotFound     = "not_found"
	ErrSpaceMissing = "space_missing"
)

// Outcome is what the planner answered for a request.
type Outcome struct {
	Steps   []Step   `json:"steps,omitempty"`
	Choices []string `json:"choices,omitempty"`
	Error   string   `json:"error,omitempty"` // a kind above, or the error's text
}

// Planner plans one request (nothing runs).
type Planner func(ctx context.Context, request string) (Outcome, error)

// Miss is a request planned otherwise than expected.
type Miss struct {
	Kind     string  `json:"kind"`
	Q        string  `json:"q"`
	Expected Outcome `json:"expected"`
	Got      Outcome `json:"got"`
}

// KindFigures are one kind's counts.
type KindFigures struct {
	N     int `json:"n"`
	Right int `json:"right"`
}

// Report is a run's figures.
type Report struct {
	N        int     `json:"n"`
	Right    int     `json:"right"`
	Accuracy float64 `json:"accuracy"`
	// DestructiveUnasked counts requests whose expected plan has no
	// destructive step but whose plan has one.
	DestructiveUnasked int                    `json:"destructive_unasked"`
	Kinds              map[string]KindFigures `json:"kinds"`
	Misses             []Miss                 `json:"misses"`
}

// Load reads a suite: one JSON case a line; blank lines and lines
// starting with # are skipped.
func Load(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c Case
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if c.Q == "" {
			return nil, fmt.Errorf("%s:%d: a case with no request (q)", path, n)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no cases", path)
	}
	return out, nil
}

// Tools reads the outside (MCP-style) tools a suite also plans for: a
// JSON array of pipeline tools.
func Tools(path string) ([]pipeline.Tool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ts []pipeline.Tool
	if err := json.Unmarshal(b, &ts); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ts, nil
}

// Run plans every case and scores it.
func Run(ctx context.Context, cases []Case, plan Planner) (*Report, error) {
	r := &Report{Kinds: map[string]KindFigures{}}
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		got, err := plan(ctx, c.Q)
		if err != nil {
			return nil, fmt.Errorf("planning %q: %w", c.Q, err)
		}
		want := Outcome{Steps: c.Steps, Choices: c.Choices, Error: c.Error}
		ok := Same(want, got)
		k := r.Kinds[c.Kind]
		k.N++
		r.N++
		if ok {
			k.Right++
			r.Right++
		} else {
			r.Misses = append(r.Misses, Miss{Kind: c.Kind, Q: c.Q, Expected: want, Got: got})
		}
		r.Kinds[c.Kind] = k
		asked := slices.ContainsFunc(c.Steps, func(s Step) bool { return destructiveTool(s.Tool) })
		if !asked && slices.ContainsFunc(got.Steps, func(s Step) bool { return s.Destructive }) {
			r.DestructiveUnasked++
		}
	}
	if r.N > 0 {
		r.Accuracy = float64(r.Right) / float64(r.N)
	}
	return r, nil
}

// destructiveTool: the suites' destructive tools, by name (an expected
// plan names them; outcomes carry the registry's flag).
func destructiveTool(name string) bool {
	return name == "delete-file" || strings.Contains(name, "delete") || strings.Contains(name, "remove")
}

// Same reports whether an outcome is the expected one.
func Same(want, got Outcome) bool {
	if want.Error != "" || got.Error != "" {
		return want.Error == got.Error
	}
	if len(want.Choices) > 0 || len(got.Choices) > 0 {
		a, b := slices.Clone(want.Choices), slices.Clone(got.Choices)
		sort.Strings(a)
		sort.Strings(b)
		return slices.Equal(a, b) && len(got.Steps) == 0
	}
	if len(want.Steps) != len(got.Steps) {
		return false
	}
	for i := range want.Steps {
		w, g := want.Steps[i], got.Steps[i]
		if w.Tool != g.Tool || w.Foreach != g.Foreach || len(w.Args) != len(g.Args) {
			return false
		}
		for k, wv := range w.Args {
			gv, ok := g.Args[k]
			if !ok || !sameValue(k, wv, gv) {
				return false
			}
		}
	}
	return true
}

func sameValue(key string, want, got any) bool {
	if key == "expression" {
		ws, ok1 := want.(string)
		gs, ok2 := got.(string)
		if ok1 && ok2 {
			wv, err1 := builtin.Eval(ws)
			gv, err2 := builtin.Eval(gs)
			return err1 == nil && err2 == nil && closeTo(wv, gv)
		}
	}
	if ws, ok := want.(string); ok {
		gs, ok := got.(string)
		return ok && strings.TrimSpace(ws) == strings.TrimSpace(gs)
	}
	return reflect.DeepEqual(normalize(want), normalize(got))
}

func closeTo(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	scale := max(1, abs(a), abs(b))
	return d <= 1e-9*scale
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// normalize makes numbers float64 for comparison.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}
