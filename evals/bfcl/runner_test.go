package bfcl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
)

// baseline is the test-only no-LLM predictor: pick the function whose name
// and description share the most words with the request, fill every
// required argument with a schema-valid placeholder, and make no call when
// nothing overlaps.
type baseline struct{}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) > 3 {
			out[w] = true
		}
	}
	return out
}

func placeholder(schema map[string]any) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	t := schema["type"]
	if ts, ok := t.([]any); ok {
		t = ts[0]
	}
	switch t {
	case "integer":
		return 1
	case "number":
		return 1.5
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		obj := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		req, _ := schema["required"].([]any)
		for _, r := range req {
			if p, ok := props[r.(string)].(map[string]any); ok {
				obj[r.(string)] = placeholder(p)
			}
		}
		return obj
	}
	return "x"
}

func (baseline) Predict(_ context.Context, q Question, tools []ToolSchemaJSON) ([]Call, error) {
	req := words(q.Text())
	best, bestScore := -1, 0
	for i, t := range tools {
		score := 0
		for w := range words(strings.NewReplacer(".", " ", "_", " ").Replace(t.Name) + " " + t.Description) {
			if req[w] {
				score++
			}
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 || bestScore < 2 {
		return nil, nil
	}
	var schema map[string]any
	if err := json.Unmarshal(tools[best].Parameters, &schema); err != nil {
		return nil, err
	}
	args := placeholder(schema).(map[string]any)
	return []Call{{Name: tools[best].Name, Args: args}}, nil
}

func TestRunOracleOnFixtures(t *testing.T) {
	results, err := Run(context.Background(), Options{DataDir: "testdata", Predictor: oracle{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(SingleTurnCategories) {
		t.Fatalf("%d categories, want %d", len(results), len(SingleTurnCategories))
	}
	for _, r := range results {
		if r.N != 4 {
			t.Errorf("%s: n=%d, want 4", r.Category, r.N)
		}
		if r.FunctionAcc != 1 || r.ASTAcc != 1 {
			t.Errorf("%s: function_acc %.2f ast_acc %.2f with the ground truth's own answers: %+v", r.Category, r.FunctionAcc, r.ASTAcc, r.Failures)
		}
		if len(r.Latencies) != r.N {
			t.Errorf("%s: %d latencies", r.Category, len(r.Latencies))
		}
	}
}

func TestRunBaselineOnFixtures(t *testing.T) {
	var progress bytes.Buffer
	results, err := Run(context.Background(), Options{DataDir: "testdata", Categories: []string{"simple_python", "irrelevance", "multiple"}, Predictor: baseline{}}, &progress)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0].Category != "simple_python" || results[2].Category != "multiple" {
		t.Fatalf("results %+v", results)
	}
	for _, r := range results {
		if r.ASTAcc > r.FunctionAcc && !IsRelevanceCategory(r.Category) {
			t.Errorf("%s: ast_acc %.2f > function_acc %.2f", r.Category, r.ASTAcc, r.FunctionAcc)
		}
		if r.ValidityRate() != 1 {
			t.Errorf("%s: the baseline's placeholder calls should all be schema-valid, got %d/%d", r.Category, r.ValidCalls, r.Calls)
		}
	}
	if !strings.Contains(progress.String(), "bfcl: 12/12 (100%)") {
		t.Errorf("progress lines missing the end: %q", progress.String())
	}
}

func TestRunPredictorError(t *testing.T) {
	boom := PredictorFunc(func(context.Context, Question, []ToolSchemaJSON) ([]Call, error) { return nil, errors.New("boom") })
	results, err := Run(context.Background(), Options{DataDir: "testdata", Categories: []string{"irrelevance"}, Predictor: boom}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A failing predictor must not score as "correctly made no call".
	if r := results[0]; r.ASTAcc != 0 || r.FunctionAcc != 0 || r.PredictErrors != 4 {
		t.Errorf("got %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Options{DataDir: "testdata", Predictor: oracle{}}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: err %v", err)
	}
}

func TestJSONLineFormat(t *testing.T) {
	r := CategoryResult{Category: "simple_python", N: 4, FunctionAcc: 0.75, ASTAcc: 0.5, Calls: 3, Latencies: nil}
	want := `{"category":"simple_python","n":4,"function_acc":0.75,"ast_acc":0.5}`
	if got := string(r.JSONLine()); got != want {
		t.Errorf("JSONLine = %s, want %s", got, want)
	}
	b, _ := json.Marshal(r)
	if string(b) != want {
		t.Errorf("json.Marshal = %s, want %s", b, want)
	}
}

// TestRunJSONAndReport: the JSON lines, the table and the report of a run
// (the CLI around them, `airs eval bfcl`, is tested in cmd/airs).
func TestRunJSONAndReport(t *testing.T) {
	dir := t.TempDir()
	results, err := Run(context.Background(), Options{DataDir: "testdata", Categories: []string{"simple_python", "parallel", "live_relevance"}, Predictor: baseline{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range results {
		lines = append(lines, string(r.JSONLine()))
	}
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	lineRE := regexp.MustCompile(`^\{"category":"[a-z_]+","n":4,"function_acc":[0-9.e-]+,"ast_acc":[0-9.e-]+\}$`)
	for i, l := range lines {
		if !lineRE.MatchString(l) {
			t.Errorf("line %d %q does not have the required form", i, l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 4 {
			t.Errorf("line %d: %v %v", i, m, err)
		}
	}
	if !strings.HasPrefix(lines[1], `{"category":"parallel"`) {
		t.Errorf("categories out of order: %q", lines)
	}
	if _, err := WriteReport(dir, results, ReportInfo{Command: "airs eval bfcl --data testdata", Model: "none", Elapsed: time.Second}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "bfcl.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| simple_python | 4 |", "![accuracy per category](bfcl_accuracy.png)", "Command: `airs eval bfcl --data testdata`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, name := range []string{"bfcl_accuracy.png", "bfcl_latency.png"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s: %v", name, b)
		}
	}
	var table bytes.Buffer
	WriteTable(&table, results)
	if !strings.Contains(table.String(), "overall") || strings.Count(table.String(), "\n") != 5 {
		t.Errorf("table:\n%s", table.String())
	}
	if _, err := WriteReport(t.TempDir(), nil, ReportInfo{}); err == nil {
		t.Error("a report of no results")
	}
}

// TestBaselineOnAllData runs the test baseline over the whole data set and
// logs its scores (a smoke test of the runner at full size).
func TestBaselineOnAllData(t *testing.T) {
	dir := dataDir(t)
	results, err := Run(context.Background(), Options{DataDir: dir, Predictor: baseline{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		t.Logf("%s", r.JSONLine())
		if r.ValidityRate() != 1 {
			t.Errorf("%s: %d/%d placeholder calls valid", r.Category, r.ValidCalls, r.Calls)
		}
	}
}
