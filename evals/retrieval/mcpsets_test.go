package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The MCP retrieval sets committed in data/ (made by make_mcp_bench.py and
// make_livemcpbench.py): MCP-Bench's tasks split into a development and a
// test half over one tool pool, and LiveMCPBench's tasks, kept for the
// final measurement.
var (
	mcpBenchTools = filepath.Join("data", "mcp_bench_tools.jsonl.gz")
	mcpBenchDev   = filepath.Join("data", "mcp_bench_dev_queries.jsonl.gz")
	mcpBenchTest  = filepath.Join("data", "mcp_bench_test_queries.jsonl.gz")
	liveMCPTools  = filepath.Join("data", "livemcpbench_tools.jsonl.gz")
	liveMCPQuery  = filepath.Join("data", "livemcpbench_queries.jsonl.gz")
)

// mcpSetQuery is a query record of the committed MCP sets, with the fields
// the converters add beside the loader's {id, query, tools}.
type mcpSetQuery struct {
	ID      string   `json:"id"`
	Query   string   `json:"query"`
	Tools   []string `json:"tools"`
	Servers []string `json:"servers"`
	Final   bool     `json:"final_measurement_only"`
}

func readMCPQueries(t *testing.T, path string) []mcpSetQuery {
	t.Helper()
	recs, err := readRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	if k := Classify(recs); k != KindQueries {
		t.Fatalf("%s: read as %v, want queries", path, k)
	}
	out := make([]mcpSetQuery, 0, len(recs))
	for i, r := range recs {
		var q mcpSetQuery
		if err := json.Unmarshal(r, &q); err != nil {
			t.Fatalf("%s: record %d: %v", path, i+1, err)
		}
		out = append(out, q)
	}
	return out
}

// readToolIDs reads a tools file the way Load does and returns its IDs
// (server/name), failing on a duplicate.
func readToolIDs(t *testing.T, path string) map[string]bool {
	t.Helper()
	recs, err := readRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	if k := Classify(recs); k != KindTools {
		t.Fatalf("%s: read as %v, want tools", path, k)
	}
	ids := map[string]bool{}
	for i, r := range recs {
		d, err := toolDoc(r)
		if err != nil {
			t.Fatalf("%s: record %d: %v", path, i+1, err)
		}
		if ids[d.ID] {
			t.Fatalf("%s: tool %s twice", path, d.ID)
		}
		ids[d.ID] = true
	}
	return ids
}

// checkGold fails when a query has no text, no gold, a gold tool missing
// from the pool (Load would drop it silently and the query would be scored
// on fewer tools than its task needs) or a repeated ID.
func checkGold(t *testing.T, name string, qs []mcpSetQuery, pool map[string]bool) {
	t.Helper()
	if len(qs) == 0 {
		t.Fatalf("%s: no queries", name)
	}
	seen := map[string]bool{}
	for _, q := range qs {
		if q.ID == "" || strings.TrimSpace(q.Query) == "" || len(q.Tools) == 0 {
			t.Errorf("%s: query %q lacks an id, a text or gold tools", name, q.ID)
		}
		if seen[q.ID] {
			t.Errorf("%s: query id %s twice", name, q.ID)
		}
		seen[q.ID] = true
		for _, g := range q.Tools {
			if !pool[g] {
				t.Errorf("%s: query %s: gold tool %s is not in the pool", name, q.ID, g)
			}
		}
	}
}

// TestMCPBenchSplit checks the MCP development set: every gold tool is in
// the pool, and the dev and test halves share no query, no query text and
// no server combination (the unit of the split: MCP-Bench writes two tasks
// per combination, close in wording and tools).
func TestMCPBenchSplit(t *testing.T) {
	pool := readToolIDs(t, mcpBenchTools)
	dev, test := readMCPQueries(t, mcpBenchDev), readMCPQueries(t, mcpBenchTest)
	checkGold(t, "mcp_bench_dev", dev, pool)
	checkGold(t, "mcp_bench_test", test, pool)

	combo := func(q mcpSetQuery) string {
		s := append([]string(nil), q.Servers...)
		sort.Strings(s)
		return strings.Join(s, "+")
	}
	devIDs, devTexts, devCombos := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, q := range dev {
		if len(q.Servers) == 0 {
			t.Fatalf("dev query %s names no server", q.ID)
		}
		devIDs[q.ID], devTexts[normText(q.Query)], devCombos[combo(q)] = true, true, true
	}
	for _, q := range test {
		if devIDs[q.ID] || devTexts[normText(q.Query)] {
			t.Errorf("test query %s is also in the dev half", q.ID)
		}
		if len(q.Servers) == 0 || devCombos[combo(q)] {
			t.Errorf("test query %s: server combination %q is also in the dev half", q.ID, combo(q))
		}
	}
	// Gold tools belong to the servers the task was written for.
	for _, q := range append(append([]mcpSetQuery(nil), dev...), test...) {
		servers := map[string]bool{}
		for _, s := range q.Servers {
			servers[s] = true
		}
		for _, g := range q.Tools {
			if i := strings.IndexByte(g, '/'); i < 0 || !servers[g[:i]] {
				t.Errorf("query %s: gold %s is not a tool of its servers %v", q.ID, g, q.Servers)
			}
		}
	}
	// Both halves are asked of the same pool: the test half's pool is not a
	// tuned subset.
	sets, err := Load([]string{mcpBenchTools, mcpBenchDev, mcpBenchTest})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range sets {
		if len(s.Docs) != len(pool) {
			t.Errorf("%s: %d tools in the pool, want %d", s.Name, len(s.Docs), len(pool))
		}
		if IsSplit(s.Name) {
			t.Errorf("%s is split by the training split: it must stay out of training", s.Name)
		}
		got[s.Name] = len(s.Queries)
	}
	if got["mcp_bench_dev"] != len(dev) || got["mcp_bench_test"] != len(test) {
		t.Errorf("Load kept %v queries, files hold dev %d, test %d", got, len(dev), len(test))
	}
}

// TestLiveMCPBenchSet checks the final-measurement set: every gold tool is
// in LiveMCPBench's pool, every query is marked final-measurement-only and
// none of its tasks is also a development task.
func TestLiveMCPBenchSet(t *testing.T) {
	pool := readToolIDs(t, liveMCPTools)
	qs := readMCPQueries(t, liveMCPQuery)
	checkGold(t, "livemcpbench", qs, pool)
	dev := map[string]bool{}
	for _, path := range []string{mcpBenchDev, mcpBenchTest} {
		for _, q := range readMCPQueries(t, path) {
			dev[normText(q.Query)] = true
		}
	}
	for _, q := range qs {
		if !q.Final {
			t.Errorf("livemcpbench query %s is not marked final_measurement_only", q.ID)
		}
		if dev[normText(q.Query)] {
			t.Errorf("livemcpbench query %s is also an MCP-Bench query", q.ID)
		}
	}
	if IsSplit("livemcpbench") {
		t.Error("livemcpbench is split by the training split: it must stay out of training")
	}
}

// TestMCPSetsEval runs `airs eval retrieval` on each committed set (its own
// pool, no distractors: those live in ../shared/data) and checks that every
// query is scored by both methods with metrics in range.
func TestMCPSetsEval(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the tool model")
	}
	for _, run := range []struct {
		files []string
		want  map[string]int
	}{
		{[]string{mcpBenchTools, mcpBenchDev, mcpBenchTest}, map[string]int{
			"mcp_bench_dev": len(readMCPQueries(t, mcpBenchDev)), "mcp_bench_test": len(readMCPQueries(t, mcpBenchTest))}},
		{[]string{liveMCPTools, liveMCPQuery}, map[string]int{"livemcpbench": len(readMCPQueries(t, liveMCPQuery))}},
	} {
		var out bytes.Buffer
		if err := Run(context.Background(), Options{Data: run.files, JSON: true, Workers: 1}, &out); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var r Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			if r.N != run.want[r.Dataset] {
				t.Errorf("%s/%s: scored %d queries, want %d", r.Dataset, r.Method, r.N, run.want[r.Dataset])
			}
			for _, v := range []float64{r.Acc1, r.Recall5, r.Recall10, r.NDCG5, r.NDCG10} {
				if v < 0 || v > 1 {
					t.Errorf("%s/%s: metric %v out of [0, 1]", r.Dataset, r.Method, v)
				}
			}
			seen[r.Dataset+"|"+r.Method] = true
		}
		for ds := range run.want {
			if !seen[ds+"|airs"] || !seen[ds+"|bm25"] {
				t.Errorf("%s: missing a method in %v", ds, seen)
			}
		}
	}
}

// TestConformanceMCPGoal checks the MCP goal on requests written as people
// ask: AIRS's NDCG@10 at least 10 points above BM25 on MCP-Bench's test half
// (among the Docker MCP registry's tools as distractors) and on LiveMCPBench
// (final measurement). The dev half is logged, not asserted: it is for
// choosing. It needs the registry in ../shared/data and runs in make
// conformance (AIRS_CONFORMANCE=1), which reports it without stopping.
func TestConformanceMCPGoal(t *testing.T) {
	d := dataDir()
	registry := filepath.Join(d, "tools", "docker_mcp_registry_tools.jsonl.gz")
	if _, err := os.Stat(registry); err != nil {
		t.Skipf("Docker MCP registry not found at %q (set DATA_DIR): %v", d, err)
	}
	if testing.Short() || os.Getenv("AIRS_CONFORMANCE") == "" {
		t.Skip("the MCP goal runs in make conformance (AIRS_CONFORMANCE=1)")
	}
	res := map[string]Result{}
	for _, files := range [][]string{
		{registry, mcpBenchTools, mcpBenchDev, mcpBenchTest},
		{liveMCPTools, liveMCPQuery},
	} {
		var out bytes.Buffer
		if err := Run(context.Background(), Options{Data: files, JSON: true}, &out); err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var r Result
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			res[r.Dataset+"|"+r.Method] = r
		}
	}
	for _, ds := range []string{"mcp_bench_dev", "mcp_bench_test", "livemcpbench"} {
		a, b := res[ds+"|airs"], res[ds+"|bm25"]
		if a.N == 0 || a.N != b.N {
			t.Fatalf("%s: n airs %d bm25 %d", ds, a.N, b.N)
		}
		margin := 100 * (a.NDCG10 - b.NDCG10)
		t.Logf("%s: NDCG@10 airs %.3f bm25 %.3f (%+.1f points), recall@5 %.3f / %.3f", ds, a.NDCG10, b.NDCG10, margin, a.Recall5, b.Recall5)
		if ds != "mcp_bench_dev" && margin < 10 {
			t.Errorf("%s: NDCG@10 %+.1f points over BM25, goal +10", ds, margin)
		}
	}
}
