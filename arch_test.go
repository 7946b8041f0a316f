package airs_test

// The rules of docs/ARCHITECTURE.md, checked against the real code so they
// stay true. The page's package table is the source: a package belongs to
// the row whose package path is its longest prefix; it may import only
// packages of its own row or rows below it; and each clause of the row's
// "must not" column is either a rule this file checks (an import, an
// importer, a type in the exported API) or a behaviour listed in `reviewed`
// with the reason no import graph can show it. A clause that is neither
// fails the test, so the page cannot promise what nothing checks.
//
// The graph is the union over build configurations (no tags; every tag the
// tree uses; GOOS=windows for the !unix files), tests' imports included.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/airs-dev/airs"

// allTags are every build tag the tree's files use; the graph is read with
// and without them.
const allTags = "inproc e2e airs_chattest"

// reviewed are the "must not" clauses that state a behaviour rather than a
// dependency, with why no import graph can check them: a reviewer reads
// them. Every entry must still be on the page.
var reviewed = map[string]string{
	"hold logic a package should own":         "what counts as a package's logic is a judgement",
	"decide or execute itself":                "server imports pipeline to hand calls on; whether it decides is read in review",
	"run a tool":                              "it imports pipeline for its types; a call to Manager.Call is read in review",
	"execute tools":                           "selector imports pipeline for the registry's types; a call is read in review",
	"run tools other than through `pipeline`": "an activity's body is read in review",
	"hold state a worker's death would lose":  "a property of the workflow's state, not of its imports",
	"choose tools":                            "chains imports no selector (checked as its own clause); choosing in chains' own code is read in review",
	"import anything above it":                "the direction rule, checked for every row",
}

// row is one line of the package table.
type row struct {
	pkg     string   // module-relative, without a trailing slash
	mustNot []string // the "must not" column's clauses, explanations in parentheses left out
}

// graph is what the rules are checked against.
type graph struct {
	// imports: module-relative package → its imports, tests' included:
	// module-relative, or the full path of a package outside the module
	// (the standard library is left out).
	imports map[string][]string
	// api: module-relative package → the packages outside the module whose
	// names its exported declarations use.
	api map[string][]string
}

var parenthesis = regexp.MustCompile(`\s*\([^)]*\)`)

// tableRows reads ARCHITECTURE.md's package table, top (may import the
// most) to bottom.
func tableRows(r io.Reader) ([]row, error) {
	var rows []row
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
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|"), "|")
		if len(cells) != 3 {
			return nil, fmt.Errorf("a table line without 3 cells (a | inside a cell?): %s", line)
		}
		pkg := strings.TrimSuffix(strings.Trim(cells[0], "` "), "/")
		var clauses []string
		for c := range strings.SplitSeq(parenthesis.ReplaceAllString(cells[2], ""), ";") {
			if c = strings.TrimSpace(c); c != "" {
				clauses = append(clauses, c)
			}
		}
		rows = append(rows, row{pkg: pkg, mustNot: clauses})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no package table (a line starting %q) found", "| package | owns |")
	}
	return rows, sc.Err()
}

// rowOf is the index of the row pkg (module-relative) belongs to, or -1.
func rowOf(rows []row, pkg string) int {
	best, bestLen := -1, -1
	for i, r := range rows {
		if under(pkg, r.pkg) && len(r.pkg) > bestLen {
			best, bestLen = i, len(r.pkg)
		}
	}
	return best
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

func underAny(pkg string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return under(pkg, d) })
}

// inModule tells a module-relative path from an outside one (whose first
// element has a dot).
func inModule(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return !strings.Contains(first, ".")
}

var (
	quoted         = regexp.MustCompile("`([^`]+)`")
	importedByOnly = regexp.MustCompile("^be imported by anything but (`.+)$")
	importedBy     = regexp.MustCompile("^be imported by (`.+)$")
	importsNone    = regexp.MustCompile("^import (`.+)$")
)

// modelClients are what "import a model client" means.
var modelClients = []string{"internal/ollama", "model", "github.com/ollama/ollama"}

// pgxPackages are what "leak pgx types upward" means.
var pgxPackages = []string{"github.com/jackc", "github.com/pgvector"}

// rule is one checked clause of row r.
type rule struct {
	r      int
	clause string
	// edge says why p importing imp breaks the clause, or "".
	edge func(rows []row, p, imp string) string
	// api says why p's exported API naming outside package x breaks it, or "".
	api func(p, x string) string
}

func dirs(clause string) []string {
	var ds []string
	for _, m := range quoted.FindAllStringSubmatch(clause, -1) {
		ds = append(ds, strings.TrimSuffix(m[1], "/"))
	}
	return ds
}

// compile turns every row's clauses into rules; a clause it does not know
// and `reviewed` does not list is an error.
func compile(rows []row) ([]rule, error) {
	var rules []rule
	var unknown []string
	for i, rw := range rows {
		self := rw.pkg
		for _, c := range rw.mustNot {
			ru := rule{r: i, clause: c}
			switch {
			case importedByOnly.MatchString(c):
				ok := dirs(c)
				ru.edge = func(rows []row, p, imp string) string {
					if under(imp, self) && rowOf(rows, p) != i && !underAny(p, ok) {
						return fmt.Sprintf("only %v may import %s", ok, self)
					}
					return ""
				}
			case importedBy.MatchString(c):
				bad := dirs(c)
				ru.edge = func(rows []row, p, imp string) string {
					if under(imp, self) && rowOf(rows, p) == i {
						return ""
					}
					if under(imp, self) && underAny(p, bad) {
						return fmt.Sprintf("%v must not import %s", bad, self)
					}
					return ""
				}
			case c == "import anything of AIRS", c == "import anything of AIRS but the leaf helpers":
				helpers := c != "import anything of AIRS"
				ru.edge = func(rows []row, p, imp string) string {
					if rowOf(rows, p) != i || !inModule(imp) || rowOf(rows, imp) == i {
						return ""
					}
					if helpers && underAny(imp, leafHelpers(rows)) {
						return ""
					}
					return self + " imports nothing of AIRS" + map[bool]string{true: " but the leaf helpers", false: ""}[helpers]
				}
			case c == "import a model client":
				ru.edge = func(rows []row, p, imp string) string {
					if rowOf(rows, p) == i && underAny(imp, modelClients) {
						return self + " imports no model client"
					}
					return ""
				}
			case importsNone.MatchString(c):
				bad := dirs(c)
				ru.edge = func(rows []row, p, imp string) string {
					if rowOf(rows, p) != i || !underAny(imp, bad) {
						return ""
					}
					if slices.Contains(bad, "internal") && underAny(imp, leafHelpers(rows)) {
						return ""
					}
					return fmt.Sprintf("%s must not import %v", self, bad)
				}
			case c == "leak pgx types upward":
				ru.api = func(p, x string) string {
					if under(p, self) && underAny(x, pgxPackages) {
						return self + "'s exported API must not name pgx types"
					}
					return ""
				}
			default:
				if _, ok := reviewed[c]; !ok {
					unknown = append(unknown, fmt.Sprintf("%s: %q", self, c))
				}
				continue
			}
			rules = append(rules, ru)
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("\"must not\" clauses neither checked by arch_test.go nor listed in its `reviewed`: %s", strings.Join(unknown, "; "))
	}
	return rules, nil
}

// leafHelpers are the internal/ rows that import nothing of AIRS (their
// "must not" says so); packages below internal/engine may import them.
func leafHelpers(rows []row) []string {
	var hs []string
	for _, r := range rows {
		if under(r.pkg, "internal") && slices.ContainsFunc(r.mustNot, func(c string) bool { return strings.HasPrefix(c, "import anything of AIRS") }) {
			hs = append(hs, r.pkg)
		}
	}
	return hs
}

// violations checks g against the table's rules.
func violations(rows []row, g graph) ([]string, error) {
	rules, err := compile(rows)
	if err != nil {
		return nil, err
	}
	var bad []string
	engine := rowOf(rows, "internal/engine")
	helpers := leafHelpers(rows)
	pkgs := make([]string, 0, len(g.imports))
	for p := range g.imports {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		from := rowOf(rows, p)
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s is in no row of docs/ARCHITECTURE.md's package table: add it there", p))
			continue
		}
		for _, imp := range g.imports[p] {
			var why []string
			if under(imp, "evals") && !under(p, "cmd") && !under(p, "evals") {
				why = append(why, "nothing but cmd/ imports evals/")
			}
			to := rowOf(rows, imp)
			if from > engine && to != from && under(imp, "internal") && !underAny(imp, helpers) {
				why = append(why, fmt.Sprintf("nothing below internal/engine imports internal/ (but the leaf helpers %v)", helpers))
			}
			if inModule(imp) && to >= 0 && to < from && !under(p, "cmd") {
				why = append(why, "it is above it in the table")
			}
			for _, ru := range rules {
				if ru.edge != nil {
					if w := ru.edge(rows, p, imp); w != "" {
						why = append(why, fmt.Sprintf("%s (%s: must not %s)", w, rows[ru.r].pkg, ru.clause))
					}
				}
			}
			if len(why) > 0 {
				bad = append(bad, fmt.Sprintf("%s imports %s: %s", p, imp, strings.Join(why, "; ")))
			}
		}
		for _, x := range g.api[p] {
			for _, ru := range rules {
				if ru.api != nil {
					if w := ru.api(p, x); w != "" {
						bad = append(bad, fmt.Sprintf("%s's exported API names %s: %s (%s: must not %s)", p, x, w, rows[ru.r].pkg, ru.clause))
					}
				}
			}
		}
	}
	return bad, nil
}

// moduleGraph is the module's graph: the union of `go list` over the build
// configurations, and each package's exported API read from all its
// non-test files whatever their build tags.
func moduleGraph(t *testing.T) graph {
	t.Helper()
	g := graph{imports: map[string][]string{}, api: map[string][]string{}}
	pkgDirs := map[string]string{}
	for _, cfg := range []struct{ goos, tags string }{{"", ""}, {"", allTags}, {"windows", allTags}} {
		cmd := exec.Command("go", "list", "-e", "-tags", cfg.tags, "-json=ImportPath,Dir,Imports,TestImports,XTestImports,Error", "./...")
		if cfg.goos != "" {
			cmd.Env = append(os.Environ(), "GOOS="+cfg.goos)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list (GOOS=%q, tags %q): %v\n%s", cfg.goos, cfg.tags, err, stderr.String())
		}
		dec := json.NewDecoder(bytes.NewReader(out))
		for dec.More() {
			var p struct {
				ImportPath, Dir                    string
				Imports, TestImports, XTestImports []string
				Error                              *struct{ Err string }
			}
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if p.Error != nil && !strings.Contains(p.Error.Err, "build constraints exclude all Go files") {
				t.Fatalf("go list (GOOS=%q, tags %q): %s: %s", cfg.goos, cfg.tags, p.ImportPath, p.Error.Err)
			}
			self, ok := strings.CutPrefix(p.ImportPath, module+"/")
			if !ok {
				continue // the root test package itself
			}
			pkgDirs[self] = p.Dir
			imps := g.imports[self]
			for _, list := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
				for _, imp := range list {
					r, ok := strings.CutPrefix(imp, module+"/")
					if !ok && !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") {
						continue // the standard library (or the module root)
					}
					if r != self && !slices.Contains(imps, r) {
						imps = append(imps, r)
					}
				}
			}
			g.imports[self] = imps
		}
	}
	for p, dir := range pkgDirs {
		api, err := exportedAPI(dir)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		g.api[p] = api
	}
	return g
}

// exportedAPI lists the outside packages whose names the exported
// declarations of the package in dir use (all non-test files, whatever
// their build tags).
func exportedAPI(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		for _, x := range apiRefs(src) {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

var majorVersion = regexp.MustCompile(`^v[0-9]+$`)

// apiRefs lists the outside (dotted) import paths named by one file's
// exported declarations: exported functions and methods of exported types
// (parameters, results), exported types (exported fields and methods),
// exported variables and constants with a stated type.
func apiRefs(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	names := map[string]string{}
	for _, is := range f.Imports {
		path, _ := strconv.Unquote(is.Path.Value)
		if !strings.Contains(strings.SplitN(path, "/", 2)[0], ".") || strings.HasPrefix(path, module) {
			continue
		}
		name := filepath.Base(path)
		if majorVersion.MatchString(name) {
			name = filepath.Base(filepath.Dir(path))
		}
		if is.Name != nil {
			name = is.Name.Name
		}
		names[name] = path
	}
	var refs []string
	use := func(n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok && names[id.Name] != "" && !slices.Contains(refs, names[id.Name]) {
					refs = append(refs, names[id.Name])
				}
			}
			return true
		})
	}
	exportedFields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, fd := range fl.List {
			if len(fd.Names) == 0 || slices.ContainsFunc(fd.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
				use(fd.Type)
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv != nil && len(d.Recv.List) == 1 {
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				if ix, ok := recv.(*ast.IndexExpr); ok {
					recv = ix.X
				}
				if id, ok := recv.(*ast.Ident); ok && !id.IsExported() {
					continue
				}
			}
			use(d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					switch ty := s.Type.(type) {
					case *ast.StructType:
						exportedFields(ty.Fields)
					case *ast.InterfaceType:
						exportedFields(ty.Methods)
					default:
						use(ty)
					}
				case *ast.ValueSpec:
					if slices.ContainsFunc(s.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
						use(s.Type)
					}
				}
			}
		}
	}
	return refs
}

func pageRows(t *testing.T) []row {
	t.Helper()
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
	return rows
}

func TestImportDirection(t *testing.T) {
	rows := pageRows(t)
	g := moduleGraph(t)
	if len(g.imports) < 20 {
		t.Fatalf("go list found %d packages; expected the whole module", len(g.imports))
	}
	v, err := violations(rows, g)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range v {
		t.Error(v)
	}
}

// Every entry of `reviewed` is still a clause of the page: a clause that
// left the page leaves the list too.
func TestReviewedClausesAreOnThePage(t *testing.T) {
	on := map[string]bool{}
	for _, r := range pageRows(t) {
		for _, c := range r.mustNot {
			on[c] = true
		}
	}
	for c := range reviewed {
		if !on[c] {
			t.Errorf("reviewed lists %q, which no row of docs/ARCHITECTURE.md says any more", c)
		}
	}
}

// The checker fires on one planted bad edge per rule, so a pass of
// TestImportDirection means something.
func TestImportDirectionCatchesBadImports(t *testing.T) {
	rows := []row{
		{pkg: "cmd/airs", mustNot: []string{"hold logic a package should own"}},
		{pkg: "internal/chat"},
		{pkg: "evals", mustNot: []string{"be imported by anything but `cmd/`"}},
		{pkg: "model/inproc", mustNot: []string{"be imported by anything but `cmd/`"}},
		{pkg: "internal/engine", mustNot: []string{"be imported by anything but `cmd/` and `internal/chat`"}},
		{pkg: "speculation", mustNot: []string{"import `internal/`"}},
		{pkg: "store/pg", mustNot: []string{"leak pgx types upward", "import `internal/`"}},
		{pkg: "server", mustNot: []string{"import `selector`"}},
		{pkg: "session", mustNot: []string{"import anything of AIRS"}},
		{pkg: "selector"},
		{pkg: "guard", mustNot: []string{"be imported by `pipeline`"}},
		{pkg: "guard/anomaly", mustNot: []string{"import `pipeline`"}},
		{pkg: "config", mustNot: []string{"import anything of AIRS"}},
		{pkg: "pipeline", mustNot: []string{"import anything above it"}},
		{pkg: "grammar", mustNot: []string{"import anything of AIRS but the leaf helpers"}},
		{pkg: "embeddings", mustNot: []string{"import a model client"}},
		{pkg: "internal/ollama", mustNot: []string{"import anything of AIRS"}},
		{pkg: "internal/jsonptr", mustNot: []string{"import anything of AIRS"}},
	}
	good := graph{
		imports: map[string][]string{
			"cmd/airs":         {"evals/bfcl", "internal/engine", "internal/ollama", "model/inproc"},
			"evals/replay":     {"evals/report", "selector"},
			"evals/speculate":  {"speculation", "pipeline"},
			"internal/chat":    {"internal/engine"},
			"speculation":      {"pipeline"},
			"evals/report":     nil,
			"model/inproc":     {"internal/ollama", "selector"},
			"internal/engine":  {"server", "speculation", "selector", "internal/ollama", "store/pg"},
			"store/pg":         {"pipeline", "internal/jsonptr", "github.com/jackc/pgx/v5"},
			"server":           {"pipeline", "guard"},
			"session":          nil,
			"selector":         {"pipeline", "grammar", "embeddings", "internal/ollama"},
			"guard":            {"pipeline", "guard/anomaly"},
			"guard/anomaly":    nil,
			"config":           nil,
			"pipeline/audit":   nil,
			"pipeline":         {"pipeline/audit"},
			"grammar":          {"internal/jsonptr"},
			"grammar/export":   {"grammar"},
			"embeddings":       {"github.com/philippgille/chromem-go"},
			"internal/ollama":  {"github.com/ollama/ollama/api"},
			"internal/jsonptr": nil,
		},
		api: map[string][]string{"embeddings": {"github.com/philippgille/chromem-go"}},
	}
	if v, err := violations(rows, good); err != nil || len(v) > 0 {
		t.Fatalf("a good graph is flagged: %v %v", v, err)
	}
	for _, seed := range []struct{ name, from, to, why string }{
		{"evals from the service", "internal/engine", "evals/bfcl", "nothing but cmd/ imports evals/"},
		{"evals from a library", "selector", "evals/report", "nothing but cmd/ imports evals/"},
		{"internal from below engine", "selector", "internal/engine", "nothing below internal/engine imports internal/"},
		{"internal non-leaf", "pipeline", "internal/chat", "nothing below internal/engine imports internal/"},
		{"upward", "pipeline", "selector", "above it in the table"},
		{"upward to server", "selector", "server", "above it in the table"},
		{"be imported by anything but cmd/", "internal/chat", "model/inproc", "must not be imported by anything but `cmd/`"},
		{"be imported by anything but a list", "evals/report", "internal/engine", "must not be imported by anything but `cmd/` and `internal/chat`"},
		{"the replay back on the engine", "evals/replay", "internal/engine", "must not be imported by anything but `cmd/` and `internal/chat`"},
		{"the speculation eval back on the engine", "evals/speculate", "internal/engine", "must not be imported by anything but `cmd/` and `internal/chat`"},
		{"the predictor on the engine", "speculation", "internal/engine", "must not import `internal/`"},
		{"be imported by X", "pipeline/audit", "guard", "must not be imported by `pipeline`"},
		{"import X", "guard/anomaly", "pipeline/audit", "must not import `pipeline`"},
		{"import X (a sibling row)", "server", "selector", "must not import `selector`"},
		{"import internal/", "store/pg", "internal/chat", "must not import `internal/`"},
		{"import anything of AIRS", "session", "internal/jsonptr", "must not import anything of AIRS"},
		{"config is a leaf", "config", "pipeline", "must not import anything of AIRS"},
		{"config is a leaf (scoring)", "config", "scoring", "must not import anything of AIRS"},
		{"import anything of AIRS but the leaf helpers", "grammar", "embeddings", "must not import anything of AIRS but the leaf helpers"},
		{"a leaf helper imports AIRS", "internal/ollama", "internal/jsonptr", "must not import anything of AIRS"},
		{"import a model client (outside)", "embeddings", "github.com/ollama/ollama/api", "must not import a model client"},
		{"import a model client (AIRS's)", "embeddings", "internal/ollama", "must not import a model client"},
	} {
		t.Run(seed.name, func(t *testing.T) {
			g := graph{imports: map[string][]string{}, api: good.api}
			for k, v := range good.imports {
				g.imports[k] = slices.Clone(v)
			}
			g.imports[seed.from] = append(g.imports[seed.from], seed.to)
			v, err := violations(rows, g)
			if err != nil || len(v) != 1 || !strings.HasPrefix(v[0], seed.from+" imports "+seed.to+":") || !strings.Contains(v[0], seed.why) {
				t.Errorf("%s importing %s gave %q (%v), want one violation naming it and %q", seed.from, seed.to, v, err, seed.why)
			}
		})
	}
	t.Run("leak pgx types upward", func(t *testing.T) {
		api := apiRefs([]byte("package pg\nimport \"github.com/jackc/pgx/v5/pgxpool\"\ntype DB struct{ Pool *pgxpool.Pool }\n"))
		if !slices.Equal(api, []string{"github.com/jackc/pgx/v5/pgxpool"}) {
			t.Fatalf("apiRefs of an exported pgxpool field: %v", api)
		}
		g := graph{imports: good.imports, api: map[string][]string{"store/pg": api}}
		if v, err := violations(rows, g); err != nil || len(v) != 1 || !strings.HasPrefix(v[0], "store/pg's exported API names github.com/jackc/pgx/v5/pgxpool") {
			t.Errorf("a leaked pgx type gave %q (%v), want one violation naming it", v, err)
		}
		if api := apiRefs([]byte("package pg\nimport \"github.com/jackc/pgx/v5/pgxpool\"\ntype DB struct{ pool *pgxpool.Pool }\nfunc (d *DB) Close() {}\nfunc open() *pgxpool.Pool { return nil }\n")); len(api) > 0 {
			t.Errorf("unexported uses of pgxpool counted as API: %v", api)
		}
	})
	t.Run("a package in no row", func(t *testing.T) {
		if v, err := violations(rows, graph{imports: map[string][]string{"mystery": nil}}); err != nil || len(v) != 1 {
			t.Errorf("a package in no row gave %v (%v), want one violation", v, err)
		}
	})
	t.Run("a clause nothing checks", func(t *testing.T) {
		bad := append(slices.Clone(rows), row{pkg: "scoring", mustNot: []string{"be slow"}})
		if _, err := violations(bad, good); err == nil || !strings.Contains(err.Error(), `"be slow"`) {
			t.Errorf("an unknown clause gave %v, want an error naming it", err)
		}
	})
}

// The page's count of the pipeline's error kinds is the number of Kind
// constants pipeline declares.
func TestPageCountsErrorKinds(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "pipeline/errors.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.CONST {
			for _, s := range gd.Specs {
				for _, name := range s.(*ast.ValueSpec).Names {
					if strings.HasPrefix(name.Name, "Kind") && name.IsExported() {
						n++
					}
				}
			}
		}
	}
	page, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("the %d error kinds", n); !bytes.Contains(page, []byte(want)) {
		t.Errorf("pipeline/errors.go declares %d Kind constants; docs/ARCHITECTURE.md should say %q", n, want)
	}
}
