// Package report writes what an evaluation found: Markdown reports with
// tables and PNG plots (gonum.org/v1/plot), progress for long runs, and the
// metrics and bootstrap intervals the reports quote.
//
//   - markdown.go: Document, Section, Table, Figure → a .md file.
//   - plots.go: AccuracyBarChart (accuracy per category), LatencyHistogram
//     (latency distribution), DifferencePlot (two configurations, with
//     intervals, for replay).
//   - progress.go: a bar on a terminal, plain progress lines otherwise.
//   - metrics.go: top-1/top-k accuracy, argument match, validity rate,
//     "none" correctness, latency percentiles, and a seeded bootstrap 95%
//     interval of a paired difference.
package report
