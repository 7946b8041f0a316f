// Package bench is AIRS's MaskBench-style harness for the grammar package:
// `airs grammar bench` (Main) compiles every JSONSchemaBench schema, walks
// its instances token by token through a TokenMatcher and times every mask;
// `airs grammar compile` (CompileMain) compiles or exports one schema or tool
// set; SuiteMain runs the JSON Schema Test Suite; ReportMain and CompareMain
// turn runs into CONFORMANCE.md tables and a side-by-side with the XGrammar
// peer. Each Main takes its arguments (without the command name) and writers,
// and returns an exit code, so the CLI wiring is one line.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar"
)

const benchUsage = `usage: airs grammar bench --data PATH... --vocab VOCAB [--sample N] [--limit N] [--json] [--timeout DUR] [--out FILE]

  --data PATH...   JSONSchemaBench .jsonl.gz/.jsonl files or directories of them; a
                   path that does not exist is looked up under $DATA_DIR
  --vocab VOCAB    a name under $DATA_DIR/tokenizers (llama3, qwen3, gemma3) or a path to
                   a .vocab.jsonl(.gz), tokenizer.json(.gz) or GGUF file
  --sample N       N schemas evenly spaced over all schemas sorted by id (as the peer)
  --limit N        keep the first N schemas (after --sample)
  --json           the summary is a JSON line (the last line)
  --timeout DUR    per schema (compile + all walks), default 10s
  --out FILE       write the lines to FILE instead of stdout
  --quiet          no progress on stderr
  --lenient, --strict, --declared-order   grammar options (default: faithful, any order)
`

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

// args is a tiny flag parser that allows a flag to take several values
// (--data A B C) and flags after positional arguments.
type args struct {
	vals map[string][]string
	pos  []string
}

func parseArgs(argv []string, multi, boolean map[string]bool) (*args, error) {
	a := &args{vals: map[string][]string{}}
	for i := 0; i < len(argv); i++ {
		s := argv[i]
		if !strings.HasPrefix(s, "-") || s == "-" {
			a.pos = append(a.pos, s)
			continue
		}
		name := strings.TrimLeft(s, "-")
		val, hasVal := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, val, hasVal = name[:k], name[k+1:], true
		}
		switch {
		case name == "h" || name == "help":
			return nil, errHelp
		case boolean[name]:
			if hasVal && val != "true" && val != "1" {
				continue
			}
			a.vals[name] = []string{"true"}
		case hasVal:
			a.vals[name] = append(a.vals[name], val)
		case multi[name]:
			n := 0
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
				i++
				a.vals[name] = append(a.vals[name], argv[i])
				n++
			}
			if n == 0 {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
		default:
			if i+1 >= len(argv) {
				return nil, fmt.Errorf("--%s needs a value", name)
			}
			i++
			a.vals[name] = append(a.vals[name], argv[i])
		}
	}
	return a, nil
}

var errHelp = fmt.Errorf("help")

func (a *args) str(name, def string) string {
	if v := a.vals[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return def
}

func (a *args) bool(name string) bool { return a.str(name, "") == "true" }

func (a *args) int(name string, def int) (int, error) {
	s := a.str(name, "")
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("--%s %q: want a non-negative integer", name, s)
	}
	return n, nil
}

func (a *args) check(known ...string) error {
	ok := map[string]bool{}
	for _, k := range known {
		ok[k] = true
	}
	for k := range a.vals {
		if !ok[k] {
			return fmt.Errorf("unknown flag --%s", k)
		}
	}
	return nil
}

func grammarOptions(a *args) grammar.Options {
	var o grammar.Options
	o.Lenient = a.bool("lenient")
	o.Strict = a.bool("strict")
	if a.bool("declared-order") {
		o.PropertyOrder = grammar.DeclaredOrder
	}
	return o
}

// Main is `airs grammar bench`.
func Main(argv []string, stdout, stderr io.Writer) int {
	a, err := parseArgs(argv, map[string]bool{"data": true},
		map[string]bool{"json": true, "quiet": true, "lenient": true, "strict": true, "declared-order": true})
	if err == nil {
		err = a.check("data", "vocab", "sample", "limit", "json", "timeout", "out", "quiet", "lenient", "strict", "declared-order")
	}
	if err == errHelp {
		fmt.Fprint(stdout, benchUsage)
		return 0
	}
	if err != nil {
		// One line and a hint: the whole usage would bury the mistake.
		fmt.Fprintf(stderr, "bench: %v\nRun 'airs grammar bench --help' for its flags.\n", err)
		return 2
	}
	data := append(a.vals["data"], a.pos...)
	if len(data) == 0 || a.str("vocab", "") == "" {
		fmt.Fprintf(stderr, "bench: --data and --vocab are required\n%s", benchUsage)
		return 2
	}
	sample, err1 := a.int("sample", 0)
	limit, err2 := a.int("limit", 0)
	timeout, err3 := time.ParseDuration(a.str("timeout", "10s"))
	for _, e := range []error{err1, err2, err3} {
		if e != nil {
			fmt.Fprintf(stderr, "bench: %v\n", e)
			return 2
		}
	}
	quiet := a.bool("quiet")
	logf := func(format string, v ...any) {
		if !quiet {
			fmt.Fprintf(stderr, format, v...)
		}
	}

	files, err := ExpandSources(data)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	recs, err := LoadRecords(files)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	sel, pool := Select(recs, sample, limit)
	if len(sel) == 0 {
		fmt.Fprintf(stderr, "bench: no schemas selected\n")
		return 1
	}
	vpath, err := ResolveVocab(a.str("vocab", ""))
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	t0 := time.Now()
	v, err := grammar.LoadVocab(vpath)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	rn := NewRunner(v, grammarOptions(a))
	rn.Timeout = timeout
	logf("bench: %d of %d schemas from %d files; vocab %s (%d tokens, EOS %v) ready in %v\n",
		len(sel), pool, len(files), vpath, len(v.Tokens), v.EOS, time.Since(t0).Round(time.Millisecond))

	out := stdout
	if p := a.str("out", ""); p != "" {
		f, err := os.Create(p)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		defer f.Close()
		out = f
	}
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	var tot Totals
	wall := time.Now()
	for i, rec := range sel {
		r := rn.Run(rec)
		tot.Add(r)
		if err := enc.Encode(r); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		if (i+1)%100 == 0 || i+1 == len(sel) {
			logf("bench: %d/%d schemas, %d passing, %v\n", i+1, len(sel), tot.Passing, time.Since(wall).Round(time.Second))
		}
	}
	sum := tot.Finish()
	if a.bool("json") {
		if err := enc.Encode(sum); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		return 0
	}
	writeTextSummary(out, &tot)
	return 0
}

func pct(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func writeTextSummary(w io.Writer, t *Totals) {
	fmt.Fprintf(w, "schemas %d  compiled %d  passing %d (%s)  compile errors %d  timeouts %d  crashes %d  test errors %d  input errors %d\n",
		t.Schemas, t.Compiled, t.Passing, pct(t.Passing, t.Schemas), t.CompileErrors, t.Timeouts, t.Crashes, t.TestErrors, t.InputErrors)
	fmt.Fprintf(w, "valid accepted %d/%d  invalid rejected %d/%d (at a token %d)  false accepts %d  mismatches %d\n",
		t.ValidAccepted, t.ValidTotal, t.InvalidRejected, t.InvalidTotal, t.RejectedAtToken, t.FalseAccepts, t.Mismatch)
	fmt.Fprintf(w, "mask µs p50 %.3f p90 %.3f p99 %.3f max %.3f over %d masks\n", t.MaskUS.P50, t.MaskUS.P90, t.MaskUS.P99, t.MaskUS.Max, t.Masks)
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
