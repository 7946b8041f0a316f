// Command grammarbench runs the grammar harnesses until `airs grammar` is
// wired into cmd/airs:
//
//	grammarbench bench   --data PATH... --vocab VOCAB [--sample N] [--limit N] [--json]
//	grammarbench compile SCHEMA.json [--tools TOOLS.json] [--export gbnf|json-schema]
//	grammarbench suite   [--dir DIR] [--markdown|--json]
//	grammarbench report  --bench BENCH.jsonl [--suite SUITE.jsonl]     (CONFORMANCE.md)
//	grammarbench compare --ours OURS.jsonl --peer PEER.jsonl           (side by side)
package main

import (
	"fmt"
	"os"

	"github.com/airs-dev/airs/grammar/bench"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grammarbench bench|compile|suite|report|compare [flags]")
		os.Exit(2)
	}
	mains := map[string]func([]string, *os.File, *os.File) int{
		"bench":   func(a []string, o, e *os.File) int { return bench.Main(a, o, e) },
		"compile": func(a []string, o, e *os.File) int { return bench.CompileMain(a, o, e) },
		"suite":   func(a []string, o, e *os.File) int { return bench.SuiteMain(a, o, e) },
		"report":  func(a []string, o, e *os.File) int { return bench.ReportMain(a, o, e) },
		"compare": func(a []string, o, e *os.File) int { return bench.CompareMain(a, o, e) },
	}
	m, ok := mains[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "grammarbench: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	os.Exit(m(os.Args[2:], os.Stdout, os.Stderr))
}
