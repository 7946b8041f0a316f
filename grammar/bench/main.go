// Package bench is AIRS's MaskBench-style harness for the grammar package:
// Bench compiles every JSONSchemaBench schema, walks its instances token by
// token through a TokenMatcher and times every mask; Compile compiles or
// exports one schema or tool set; RunSuite runs the JSON Schema Test Suite;
// WriteConformance and Compare turn runs into CONFORMANCE.md and a
// side-by-side with the XGrammar peer.
//
// The package parses no flags and picks no output: `airs grammar
// compile|bench|suite` (cmd/airs) and grammarbench (./cmd/grammarbench, the
// scripts' tool) own their flags and call these functions.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar"
)

// Summary is the last line of `bench --json`, exactly this shape.
type Summary struct {
	Summary       bool        `json:"summary"`
	Schemas       int         `json:"schemas"`
	Compiled      int         `json:"compiled"`
	Passing       int         `json:"passing"`
	CompileErrors int         `json:"compile_errors"`
	FalseAccepts  int         `json:"false_accepts"`
	Timeouts      int         `json:"timeouts"`
	MaskUS        Percentiles `json:"mask_us"`
	CompileMS     Percentiles `json:"compile_ms"`
}

// Totals holds the counts a Summary is made of plus the detail the text
// summary and reports print.
type Totals struct {
	Summary
	Crashes, TestErrors, InputErrors               int
	ValidationErrors, InvalidationErrors           int
	ValidAccepted, ValidTotal                      int
	InvalidRejected, InvalidTotal, RejectedAtToken int
	Masks, Tokens, Mismatch                        int
	mask, compile                                  []float64
}

// Add counts one schema result.
func (t *Totals) Add(r *SchemaResult) {
	if r.Status == StatusInputError {
		t.InputErrors++
		return
	}
	t.Schemas++
	if r.Compiled {
		t.Compiled++
	}
	switch r.Status {
	case StatusOK:
		t.Passing++
	case StatusCompileError:
		t.CompileErrors++
	case StatusTimeout:
		t.Timeouts++
	case StatusCrash:
		t.Crashes++
	case StatusTestError:
		t.TestErrors++
	case StatusValidationError:
		t.ValidationErrors++
	case StatusInvalidationError:
		t.InvalidationErrors++
	}
	if r.testsRan() {
		t.ValidAccepted += r.ValidAccepted
		t.ValidTotal += r.ValidTotal
		t.InvalidRejected += r.InvalidRejected
		t.InvalidTotal += r.InvalidTotal
		t.RejectedAtToken += r.InvalidRejectedAtToken
		t.FalseAccepts += r.InvalidTotal - r.InvalidRejected
	}
	if r.Status != StatusTimeout && r.Status != StatusCrash {
		t.mask = append(t.mask, r.maskUS...)
		t.Masks += r.Masks
		t.Tokens += r.Tokens
		t.Mismatch += r.Mismatch
	}
	if r.Compiled && r.Status != StatusTimeout {
		t.compile = append(t.compile, r.CompileMS)
	}
}

// Finish computes the percentiles.
func (t *Totals) Finish() Summary {
	t.Summary.Summary = true
	t.MaskUS = Summarize(t.mask)
	t.CompileMS = Summarize(t.compile)
	return t.Summary
}

// ResolveVocab finds a vocabulary: a bare name is
// $DATA_DIR/tokenizers/NAME.vocab.jsonl.gz (or .vocab.jsonl,
// .tokenizer.json.gz); anything else is a path.
func ResolveVocab(arg string) (string, error) {
	if strings.ContainsRune(arg, os.PathSeparator) || strings.Contains(arg, ".") {
		if _, err := os.Stat(arg); err != nil {
			return "", fmt.Errorf("vocab %s: %v", arg, err)
		}
		return arg, nil
	}
	for _, ext := range []string{".vocab.jsonl.gz", ".vocab.jsonl", ".tokenizer.json.gz", ".tokenizer.json"} {
		p := filepath.Join(DataDir(), "tokenizers", arg+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("vocab %q: no tokenizers/%s.vocab.jsonl.gz under DATA_DIR=%s", arg, arg, DataDir())
}

// BenchConfig is one MaskBench-style run (`airs grammar bench`).
type BenchConfig struct {
	// Data are JSONSchemaBench .jsonl(.gz) files or directories of them; a
	// path that does not exist is looked up under DataDir.
	Data []string
	// Vocab is a name under DataDir/tokenizers or a path (ResolveVocab).
	Vocab string
	// Sample keeps N schemas evenly spaced over all schemas sorted by id
	// (as the peer does), Limit the first N after that; 0 keeps all.
	Sample, Limit int
	// Timeout bounds each schema (compile and all walks); 0 is 10s.
	Timeout time.Duration
	Options grammar.Options
	// Logf, when set, receives progress lines.
	Logf func(format string, v ...any)
}

// Bench runs cfg: it calls each with every schema's result, in order (an
// error from each stops the run), and returns the finished totals.
func Bench(cfg BenchConfig, each func(*SchemaResult) error) (*Totals, error) {
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if len(cfg.Data) == 0 || cfg.Vocab == "" {
		return nil, fmt.Errorf("data and a vocabulary are required")
	}
	files, err := ExpandSources(cfg.Data)
	if err != nil {
		return nil, err
	}
	recs, err := LoadRecords(files)
	if err != nil {
		return nil, err
	}
	sel, pool := Select(recs, cfg.Sample, cfg.Limit)
	if len(sel) == 0 {
		return nil, fmt.Errorf("no schemas selected")
	}
	vpath, err := ResolveVocab(cfg.Vocab)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	v, err := grammar.LoadVocab(vpath)
	if err != nil {
		return nil, err
	}
	rn := NewRunner(v, cfg.Options)
	if cfg.Timeout > 0 {
		rn.Timeout = cfg.Timeout
	}
	logf("bench: %d of %d schemas from %d files; vocab %s (%d tokens, EOS %v) ready in %v\n",
		len(sel), pool, len(files), vpath, len(v.Tokens), v.EOS, time.Since(t0).Round(time.Millisecond))
	var tot Totals
	wall := time.Now()
	for i, rec := range sel {
		r := rn.Run(rec)
		tot.Add(r)
		if err := each(r); err != nil {
			return nil, err
		}
		if (i+1)%100 == 0 || i+1 == len(sel) {
			logf("bench: %d/%d schemas, %d passing, %v\n", i+1, len(sel), tot.Passing, time.Since(wall).Round(time.Second))
		}
	}
	tot.Finish()
	return &tot, nil
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

// WriteBench runs Bench and writes its lines to w: one JSON line per
// schema, then the summary, as a JSON line when asJSON and else as
// WriteTextSummary prints it (what `airs grammar bench` and grammarbench
// print).
func WriteBench(w io.Writer, cfg BenchConfig, asJSON bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	tot, err := Bench(cfg, func(r *SchemaResult) error { return enc.Encode(r) })
	if err != nil {
		return err
	}
	if asJSON {
		return enc.Encode(tot.Summary)
	}
	WriteTextSummary(w, tot)
	return nil
}

// WriteTextSummary prints a run's totals for a reader (`bench` without
// --json).
func WriteTextSummary(w io.Writer, t *Totals) {
	fmt.Fprintf(w, "schemas %d  compiled %d  passing %d (%s)  compile errors %d  timeouts %d  crashes %d  test errors %d  input errors %d\n",
		t.Schemas, t.Compiled, t.Passing, pct(t.Passing, t.Schemas), t.CompileErrors, t.Timeouts, t.Crashes, t.TestErrors, t.InputErrors)
	fmt.Fprintf(w, "valid accepted %d/%d  invalid rejected %d/%d (at a token %d)  false accepts %d  mismatches %d\n",
		t.ValidAccepted, t.ValidTotal, t.InvalidRejected, t.InvalidTotal, t.RejectedAtToken, t.FalseAccepts, t.Mismatch)
	fmt.Fprintf(w, "mask µs p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f max %.3f over %d masks\n", t.MaskUS.P50, t.MaskUS.P90, t.MaskUS.P99, t.MaskUS.P999, t.MaskUS.Max, t.Masks)
	fmt.Fprintf(w, "compile ms p50 %.3f p90 %.3f p99 %.3f max %.3f\n", t.CompileMS.P50, t.CompileMS.P90, t.CompileMS.P99, t.CompileMS.Max)
}

// sortedKeys returns m's keys sorted.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
