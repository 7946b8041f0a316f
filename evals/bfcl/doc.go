// Package bfcl runs the single-turn categories of the Berkeley Function
// Calling Leaderboard (BFCL, ShishirPatil/gorilla) against an AIRS predictor
// and scores the answers with a Go port of BFCL's AST checker.
//
// The package has four parts, one file each:
//
//   - data.go loads a category file (question, candidate functions,
//     ground_truth) as shipped in ../shared/data/bfcl.
//   - schema.go translates BFCL's function documentation ("type": "dict",
//     Python/Java/JavaScript type names) to JSON Schema 2020-12, the form the
//     grammar and the pipeline's validator take.
//   - checker.go is the AST checker: the rules of
//     bfcl_eval/eval_checker/ast_eval/ast_checker.py (simple, multiple,
//     parallel without order, type rules, string normalisation, list and
//     dict comparison) plus the relevance/irrelevance rules of its runner.
//     pyvalue.go gives the checker Python's value semantics (int vs float,
//     True == 1, list and dict equality); javaconv.go and jsconv.go port the
//     type converters BFCL applies to Java and JavaScript arguments, which a
//     model writes as source-code strings.
//   - runner.go feeds every question to a Predictor and reports, per
//     category, function accuracy (the right function names) and AST
//     accuracy (the full checker); report.go prints the results as a table
//     and writes the Markdown report with plots. `airs eval bfcl`
//     (cmd/airs) owns the flags and calls Run.
package bfcl
