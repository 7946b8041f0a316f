package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar"
)

// SuiteFile is the result of one keyword file.
type SuiteFile struct {
	File            string         `json:"file"`
	Groups          int            `json:"groups"`
	Compiled        int            `json:"compiled"`
	CompileErrors   int            `json:"compile_errors"`
	Timeouts        int            `json:"timeouts,omitempty"`
	ValidAccepted   int            `json:"valid_accepted"`
	ValidTotal      int            `json:"valid_total"`
	InvalidRejected int            `json:"invalid_rejected"`
	InvalidTotal    int            `json:"invalid_total"`
	InvalidAccepted int            `json:"invalid_accepted"`
	ErrorKeywords   map[string]int `json:"error_keywords,omitempty"`
	FalseAccepts    []string       `json:"false_accepts,omitempty"` // "group / test" descriptions (first few)
	// CompiledExact counts the compiled groups that got every test right:
	// a form that compiles is meant to be exact, so a compiled group that
	// rejects a valid instance is under-accepting and named in Inexact.
	CompiledExact int      `json:"compiled_exact"`
	Inexact       []string `json:"inexact,omitempty"` // "group / test" of each wrong test in a compiled group
}

// RunSuiteFile runs one suite file.
func RunSuiteFile(path string, opts grammar.Options, timeout time.Duration) (*SuiteFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var groups []struct {
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Tests       []struct {
			Description string          `json:"description"`
			Data        json.RawMessage `json:"data"`
			Valid       bool            `json:"valid"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(b, &groups); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	sf := &SuiteFile{File: strings.TrimSuffix(filepath.Base(path), ".json"), ErrorKeywords: map[string]int{}}
	for _, grp := range groups {
		sf.Groups++
		type result struct {
			g   *grammar.Grammar
			err error
		}
		done := make(chan result, 1)
		go func() {
			defer func() {
				if e := recover(); e != nil {
					done <- result{nil, fmt.Errorf("panic: %v", e)}
				}
			}()
			g, err := grammar.Compile(grp.Schema, opts)
			done <- result{g, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(timeout):
			sf.Timeouts++
			continue
		}
		for _, t := range grp.Tests {
			if t.Valid {
				sf.ValidTotal++
			} else {
				sf.InvalidTotal++
			}
		}
		if res.err != nil {
			sf.CompileErrors++
			kw := "other"
			var ce *grammar.CompileError
			if errors.As(res.err, &ce) && ce.Keyword != "" {
				kw = ce.Keyword
			}
			sf.ErrorKeywords[kw]++
			continue
		}
		sf.Compiled++
		exact := true
		for _, t := range grp.Tests {
			data, err := Canonical(t.Data)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %v", path, t.Description, err)
			}
			ok := matchSafe(res.g, data)
			if ok != t.Valid {
				exact = false
				sf.Inexact = append(sf.Inexact, grp.Description+" / "+t.Description)
			}
			switch {
			case t.Valid && ok:
				sf.ValidAccepted++
			case !t.Valid && !ok:
				sf.InvalidRejected++
			case !t.Valid && ok:
				sf.InvalidAccepted++
				if len(sf.FalseAccepts) < 5 {
					sf.FalseAccepts = append(sf.FalseAccepts, grp.Description+" / "+t.Description)
				}
			}
		}
		if exact {
			sf.CompiledExact++
		}
	}
	return sf, nil
}

func matchSafe(g *grammar.Grammar, data []byte) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return g.Match(data)
}

// SuiteDir is where the JSON Schema Test Suite's draft 2020-12 tests are
// under DataDir.
func SuiteDir() string {
	return filepath.Join(DataDir(), "json-schema-test-suite", "tests", "draft2020-12")
}

// RunSuite runs every keyword file (*.json) of dir, in name order.
func RunSuite(dir string, opts grammar.Options, timeout time.Duration) ([]*SuiteFile, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.json in %s", dir)
	}
	sort.Strings(files)
	var res []*SuiteFile
	for _, f := range files {
		sf, err := RunSuiteFile(f, opts, timeout)
		if err != nil {
			return nil, err
		}
		res = append(res, sf)
	}
	return res, nil
}

// WriteSuiteJSON writes one JSON line per keyword file.
func WriteSuiteJSON(w io.Writer, res []*SuiteFile) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range res {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteSuiteMarkdown prints the per-keyword table and the compile errors by
// keyword.
func WriteSuiteMarkdown(w io.Writer, res []*SuiteFile) {
	fmt.Fprintln(w, "| keyword file | groups | compiled | compiled, every test right | compile errors | valid accepted | invalid rejected | false accepts |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	var t SuiteFile
	kws := map[string]int{}
	for _, r := range res {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d/%d | %d/%d | %d |\n", r.File, r.Groups, r.Compiled, r.CompiledExact, r.CompileErrors+r.Timeouts,
			r.ValidAccepted, r.ValidTotal, r.InvalidRejected, r.InvalidTotal, r.InvalidAccepted)
		t.Groups += r.Groups
		t.Compiled += r.Compiled
		t.CompiledExact += r.CompiledExact
		t.Inexact = append(t.Inexact, prefixAll(r.File+": ", r.Inexact)...)
		t.CompileErrors += r.CompileErrors + r.Timeouts
		t.ValidAccepted += r.ValidAccepted
		t.ValidTotal += r.ValidTotal
		t.InvalidRejected += r.InvalidRejected
		t.InvalidTotal += r.InvalidTotal
		for k, n := range r.ErrorKeywords {
			kws[k] += n
		}
		t.InvalidAccepted += r.InvalidAccepted
	}
	total := t.InvalidAccepted
	fmt.Fprintf(w, "| **total** | %d | %d | %d | %d | %d/%d | %d/%d | %d |\n", t.Groups, t.Compiled, t.CompiledExact, t.CompileErrors,
		t.ValidAccepted, t.ValidTotal, t.InvalidRejected, t.InvalidTotal, total)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Valid/invalid totals count every test; tests of groups that did not compile count as neither accepted nor rejected.")
	if len(t.Inexact) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "The %d tests a compiled group gets wrong (none is a false accept unless the column says so: the grammar rejects a valid instance):\n\n", len(t.Inexact))
		for _, s := range t.Inexact {
			fmt.Fprintf(w, "- %s\n", s)
		}
	}
	writeKeywordCounts(w, "Compile errors by keyword:", kws)
}

func prefixAll(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// writeKeywordCounts writes a paragraph under heading: each keyword with
// its count, the most frequent first (nothing when kws is empty).
func writeKeywordCounts(w io.Writer, heading string, kws map[string]int) {
	if len(kws) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, heading)
	fmt.Fprintln(w)
	ks := sortedKeys(kws)
	sort.SliceStable(ks, func(i, j int) bool { return kws[ks[i]] > kws[ks[j]] })
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("`%s` %d", k, kws[k]))
	}
	fmt.Fprintln(w, strings.Join(parts, ", "))
}
