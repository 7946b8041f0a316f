package bfcl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/evals/report"
)

// PredictorFactory builds the predictor for a --model value: "none" (the
// no-LLM selector) or "ollama:MODEL". evals/predict supplies one, so that
// this package does not depend on the selector.
type PredictorFactory func(model string) (Predictor, error)

// WriteTable prints results (and the overall line) as an aligned table.
func WriteTable(w io.Writer, results []CategoryResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tn\tfunction_acc\tast_acc\tvalid_calls\t")
	for _, r := range append(results, Overall(results)) {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t\n", r.Category, r.N, r.FunctionAcc, r.ASTAcc, r.ValidityRate())
	}
	tw.Flush()
}

// ReportInfo says how a run was made, for the report's header.
type ReportInfo struct {
	Command string
	Model   string
	Elapsed time.Duration
}

// WriteReport writes dir/bfcl.md with a results table, the accuracy chart
// (bfcl_accuracy.png), the latency histogram (bfcl_latency.png), the most
// frequent error types and a few failures per category.
func WriteReport(dir string, results []CategoryResult, info ReportInfo) (string, error) {
	if len(results) == 0 {
		return "", errors.New("bfcl: no results to report")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	cats := make([]string, len(results))
	fn := make([]float64, len(results))
	ast := make([]float64, len(results))
	rows := [][]string{}
	for i, r := range results {
		cats[i], fn[i], ast[i] = r.Category, r.FunctionAcc, r.ASTAcc
	}
	overall := Overall(results)
	for _, r := range append(results, overall) {
		lat := report.SummarizeLatency(r.Latencies)
		rows = append(rows, []string{r.Category, fmt.Sprint(r.N), fmt.Sprintf("%.3f", r.FunctionAcc), fmt.Sprintf("%.3f", r.ASTAcc),
			fmt.Sprintf("%d/%d", r.ValidCalls, r.Calls), lat.P50.Round(time.Microsecond).String(), lat.P99.Round(time.Microsecond).String()})
	}
	if err := report.AccuracyBarChart(filepath.Join(dir, "bfcl_accuracy.png"), "BFCL accuracy per category ("+info.Model+")", cats,
		report.Series{Name: "function_acc", Values: fn}, report.Series{Name: "ast_acc", Values: ast}); err != nil {
		return "", err
	}
	figs := []report.Figure{{Title: "accuracy per category", Path: "bfcl_accuracy.png"}}
	if len(overall.Latencies) > 0 {
		if err := report.LatencyHistogram(filepath.Join(dir, "bfcl_latency.png"), "Predict latency per question ("+info.Model+")", overall.Latencies, 0); err != nil {
			return "", err
		}
		figs = append(figs, report.Figure{Title: "latency distribution", Path: "bfcl_latency.png"})
	}
	intro := fmt.Sprintf("Command: `%s`\n\nModel: `%s`. Questions: %d. Wall time: %s.\n\n"+
		"function_acc counts a question right when the set of called function names is the expected one; "+
		"ast_acc applies the port of BFCL's AST checker (evals/bfcl). valid_calls counts calls whose arguments "+
		"validate against the tool's translated JSON Schema.",
		info.Command, info.Model, overall.N, info.Elapsed.Round(time.Millisecond))
	errRows := [][]string{}
	for _, k := range topErrorTypes(overall.ErrorTypes, 12) {
		errRows = append(errRows, []string{k, fmt.Sprint(overall.ErrorTypes[k])})
	}
	failRows := [][]string{}
	for _, r := range results {
		for i, f := range r.Failures {
			if i == 3 {
				break
			}
			reason := f.Reason
			if len(reason) > 160 {
				reason = reason[:160] + "…"
			}
			failRows = append(failRows, []string{f.ID, f.ErrorType, reason})
		}
	}
	doc := report.Document{
		Title: "BFCL single-turn evaluation",
		Intro: intro,
		Sections: []report.Section{
			{Title: "Results", Tables: []report.Table{{Header: []string{"category", "n", "function_acc", "ast_acc", "valid_calls", "p50", "p99"}, Rows: rows}}, Figures: figs},
			{Title: "Errors", Tables: []report.Table{
				{Title: "Most frequent error types", Header: []string{"error_type", "count"}, Rows: errRows},
				{Title: "Examples (first three per category)", Header: []string{"id", "error_type", "reason"}, Rows: failRows},
			}},
		},
	}
	return doc.Write(dir, "bfcl.md")
}
