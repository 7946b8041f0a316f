package airs_test

// The import-direction rules of docs/ARCHITECTURE.md, checked against the
// real graph (`go list`), so they stay true. The table in that page is the
// source of "above" and "below": a package belongs to the row whose package
// path is its longest prefix, and may import only packages of its own row or
// rows below it.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/airs-dev/airs"

// leafHelpers are the internal/ packages that packages below internal/engine
// may import (ARCHITECTURE.md names them: they import nothing of AIRS).
var leafHelpers = []string{"internal/ollama", "internal/atomicfile", "internal/strictjson", "internal/jsonptr", "internal/gzfile", "internal/jsonvalue"}

// tableRows reads the package column of ARCHITECTURE.md's package table, top
// (may import the most) to bottom, without trailing slashes.
func tableRows(r io.Reader) ([]string, error) {
	var rows []string
	in := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "| package | owns |") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			break
		}
		cell := strings.TrimPrefix(line, "| `")
		cell, _, _ = strings.Cut(cell, "`")
		rows = append(rows, strings.TrimSuffix(cell, "/"))
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no package table (a line starting %q) found", "| package | owns |")
	}
	return rows, sc.Err()
}

// rowOf is the index of the row pkg (module-relative) belongs to, or -1.
func rowOf(rows []string, pkg string) int {
	best, bestLen := -1, -1
	for i, r := range rows {
		if (pkg == r || strings.HasPrefix(pkg, r+"/")) && len(r) > bestLen {
			best, bestLen = i, len(r)
		}
	}
	return best
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// violations checks graph (module-relative package → module-relative
// imports, tests' included) against the rules.
func violations(rows []string, graph map[string][]string) []string {
	var bad []string
	engine := rowOf(rows, "internal/engine")
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		from := rowOf(rows, p)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no row of docs/ARCHITECTURE.md's package table: add it there", p))
			continue
		}
		for _, imp := range graph[p] {
			if under(imp, "evals") && !under(p, "cmd") && !under(p, "evals") {
				bad = append(bad, fmt.Sprintf("%s imports %s: nothing but cmd/ imports evals/", p, imp))
				continue
			}
			to := rowOf(rows, imp)
			if from > engine && to != from && under(imp, "internal") && !slices.ContainsFunc(leafHelpers, func(l string) bool { return under(imp, l) }) {
				bad = append(bad, fmt.Sprintf("%s imports %s: nothing below internal/engine imports internal/ (except %v)", p, imp, leafHelpers))
				continue
			}
			if to >= 0 && to < from && !under(p, "cmd") {
				bad = append(bad, fmt.Sprintf("%s imports %s, which is above it in docs/ARCHITECTURE.md's table", p, imp))
			}
		}
	}
	return bad
}

// moduleGraph is the module's import graph from `go list`, test imports
// included, module-relative.
func moduleGraph(t *testing.T) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-tags", "e2e", "-json=ImportPath,Imports,TestImports,XTestImports,Error", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Error                              *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		rel := func(s string) (string, bool) {
			if s == module {
				return "", false
			}
			r, ok := strings.CutPrefix(s, module+"/")
			return r, ok
		}
		self, ok := rel(p.ImportPath)
		if !ok {
			continue // the root test package itself
		}
		var imps []string
		for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			for _, imp := range list {
				if r, ok := rel(imp); ok && r != self && !slices.Contains(imps, r) {
					imps = append(imps, r)
				}
			}
		}
		graph[self] = imps
	}
	return graph
}

func TestImportDirection(t *testing.T) {
	f, err := os.Open("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := tableRows(f)
	if err != nil {
		t.Fatal(err)
	}
	if rowOf(rows, "internal/engine") < 0 {
		t.Fatalf("docs/ARCHITECTURE.md's table has no internal/engine row: %v", rows)
	}
	graph := moduleGraph(t)
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages; expected the whole module", len(graph))
	}
	for _, v := range violations(rows, graph) {
		t.Error(v)
	}
}

// The checker catches each kind of bad import (a seeded bad graph), so a
// pass of TestImportDirection means something.
func TestImportDirectionCatchesBadImports(t *testing.T) {
	rows := []string{"cmd/airs", "evals", "internal/engine", "server", "selector", "pipeline", "internal/ollama"}
	good := map[string][]string{
		"cmd/airs":              {"evals/bfcl", "internal/engine", "internal/ollama"},
		"evals/replay":          {"evals/report", "internal/engine", "selector"},
		"internal/engine":       {"server", "selector", "internal/ollama"},
		"selector":              {"pipeline", "internal/ollama"},
		"pipeline/audit":        nil,
		"pipeline":              {"pipeline/audit"},
		"internal/ollama/cmd/x": {"internal/ollama"},
	}
	if v := violations(rows, good); len(v) > 0 {
		t.Fatalf("a good graph is flagged: %v", v)
	}
	for name, seed := range map[string][2]string{
		"evals from the service":     {"internal/engine", "evals/bfcl"},
		"evals from a library":       {"selector", "evals/report"},
		"internal from below engine": {"selector", "internal/engine"},
		"internal non-leaf":          {"pipeline", "internal/chat"},
		"upward":                     {"pipeline", "selector"},
		"upward to server":           {"selector", "server"},
	} {
		g := map[string][]string{}
		for k, v := range good {
			g[k] = slices.Clone(v)
		}
		g[seed[0]] = append(g[seed[0]], seed[1])
		if v := violations(rows, g); len(v) != 1 || !strings.Contains(v[0], seed[0]+" imports "+seed[1]) {
			t.Errorf("%s: %s importing %s gave %v, want one violation naming it", name, seed[0], seed[1], v)
		}
	}
	g := map[string][]string{"mystery": nil}
	if v := violations(rows, g); len(v) != 1 {
		t.Errorf("a package in no row gave %v, want one violation", v)
	}
}
