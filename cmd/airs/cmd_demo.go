package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/demodata"
)

var demoCmd = &command{
	Name:    "demo",
	Summary: "write the sample documents the example pipelines read (real PDFs)",
	Usage: `Usage:
  airs demo docs DIR

Writes the sample documents 'make demo' and the example pipelines in
chains/examples work on, as real PDFs, into DIR (created if needed; these
five files are overwritten, nothing else is touched):

  quotes/acme-2024.pdf, quotes/acme-2025.pdf   two versions of a price list
  papers/attention.pdf, bm25.pdf, grammars.pdf  three short research papers

Then it says which space of the configuration holds DIR and prints the
'airs run' commands that read them. With no airs.yaml, the space
'documents' is ~/Documents once that folder exists, so a DIR under
~/Documents needs no configuration.

Examples:
  airs demo docs ~/Documents/airs-demo
  airs --config demo.yaml demo docs /tmp/airs-docs
`,
	Run: runDemo,
}

func runDemo(a *app, args []string) error {
	fs := a.flags()
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 || pos[0] != "docs" {
		return usagef("say 'docs DIR' (the only action so far)")
	}
	if len(pos) != 2 || pos[1] == "" {
		return usagef("'demo docs' takes one DIR to write the sample documents into")
	}
	dir, err := filepath.Abs(pos[1])
	if err != nil {
		return err
	}
	if err := demodata.Write(dir); err != nil {
		return fmt.Errorf("writing the sample documents into %s: %w", dir, err)
	}
	fmt.Fprintf(a.stdout, "wrote 5 sample PDFs into %s:\n  quotes/acme-2024.pdf, quotes/acme-2025.pdf\n  papers/%s\n",
		dir, strings.Join(slices.Sorted(maps.Keys(demodata.Papers)), ", papers/"))

	// The configuration is loaded only now: with no airs.yaml the
	// documents space exists only once ~/Documents does, which writing
	// into ~/Documents/... may just have made true.
	cfg, err := a.config()
	if err != nil {
		return err
	}
	space, rel, ok := spaceOf(cfg.Spaces, dir)
	if !ok {
		fmt.Fprintf(a.stdout, "\n%s is in no space of this configuration (spaces: %s), so 'airs run' cannot read it.\n", dir, spaceList(cfg.Spaces))
		fmt.Fprintf(a.stdout, "Add it to airs.yaml (see 'airs help config'):\n  spaces:\n    documents: %s\nor write the documents under a space instead, e.g. 'airs demo docs ~/Documents/airs-demo'.\n", dir)
		return nil
	}
	prefix, spaceArg := "", ""
	if rel != "." {
		prefix = filepath.ToSlash(rel) + "/"
	}
	if space != "documents" { // the example pipelines' default space
		spaceArg = " --input " + shellQuote("space="+space)
	}
	papers, where := strings.TrimSuffix(prefix, "/"), "under "+prefix
	if papers == "" {
		papers, where = ".", "at its root"
	}
	fmt.Fprintf(a.stdout, "\nThey are in the space %q, %s; from the repository's root:\n", space, where)
	// Printed to be pasted: a folder with a space or a quote in its name
	// stays one argument.
	fmt.Fprintf(a.stdout, "  airs run chains/examples/compare-pricing.yaml%s --input %s --input %s\n", spaceArg,
		shellQuote("a="+prefix+"quotes/acme-2024.pdf"), shellQuote("b="+prefix+"quotes/acme-2025.pdf"))
	fmt.Fprintf(a.stdout, "  airs run chains/examples/summarize-papers.yaml%s --input %s\n", spaceArg, shellQuote("dir="+prefix+"papers"))
	listArgs, _ := json.Marshal(struct {
		Space     string `json:"space"`
		Dir       string `json:"dir"`
		Recursive bool   `json:"recursive"`
	}{space, papers, true})
	fmt.Fprintf(a.stdout, "  airs call list-files --args %s\n", shellQuote(string(listArgs)))
	return nil
}

// shellSafe are the arguments a POSIX shell reads as written.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./=:@%+,-]+$`)

// shellQuote writes s as one shell argument: as is when that is safe, else
// single-quoted.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// spaceOf finds the space whose root holds dir and dir's path inside it.
// "documents" wins (the example pipelines read it by default), then the
// deepest root, so that a folder under ~/Documents run from $HOME is named
// as in documents, not in cwd.
func spaceOf(spaces map[string]string, dir string) (name, rel string, ok bool) {
	dir = realPath(dir)
	type hit struct{ name, root, rel string }
	var hits []hit
	for n, root := range spaces {
		root = realPath(root)
		r, err := filepath.Rel(root, dir)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			continue
		}
		hits = append(hits, hit{n, root, r})
	}
	if len(hits) == 0 {
		return "", "", false
	}
	best := slices.MinFunc(hits, func(x, y hit) int {
		if (x.name == "documents") != (y.name == "documents") {
			if x.name == "documents" {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(len(y.root), len(x.root)), cmp.Compare(x.name, y.name))
	})
	return best.name, best.rel, true
}

// realPath resolves symlinks where it can (/tmp may be one), so that a
// space root and a folder inside it compare as paths.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func spaceList(spaces map[string]string) string {
	if len(spaces) == 0 {
		return "none"
	}
	var s []string
	for _, n := range slices.Sorted(maps.Keys(spaces)) {
		s = append(s, n+" = "+spaces[n])
	}
	return strings.Join(s, ", ")
}

// documentsHint explains a pipeline input that names no configured space,
// before anything runs: the example pipelines read the space "documents",
// which a fresh machine without ~/Documents and airs.yaml does not have.
func documentsHint(space string, cfg *config.Config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "the pipeline reads the space %q, which is not configured (spaces: %s)\n", space, spaceList(cfg.Spaces))
	b.WriteString("hint: ")
	if space == "documents" {
		if cfg.File == "" {
			b.WriteString("with no airs.yaml, documents is ~/Documents once that folder exists; ")
		}
		b.WriteString("'airs demo docs ~/Documents/airs-demo' writes the sample PDFs there and prints the commands that read them;\n")
		b.WriteString("  or add 'spaces: {documents: DIR}' to airs.yaml ('airs help config'), or pass --input space=cwd to read the current folder")
	} else {
		fmt.Fprintf(&b, "add 'spaces: {%s: DIR}' to airs.yaml ('airs help config'), or pass --input space=NAME with a configured space", space)
	}
	return b.String()
}
