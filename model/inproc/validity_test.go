//go:build inproc

package inproc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// The validity check on the tiny e2e model (random weights):
// BFCL tool-call requests and JSONSchemaBench schemas, every output
// generated under AIRS's masks and checked against the full schema by an
// independent validator (santhosh-tekuri/jsonschema with format assertion
// and ECMA-262 regexes). Sizes: INPROC_BFCL_N, INPROC_JSB_N. A generation
// may use the whole context left after its prompt (8192 tokens in all);
// reaching that before the grammar accepts is a runaway and fails.

func dataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	return "../../../shared/data"
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

func readGz(t testing.TB, path string, each func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (set DATA_DIR to the shared data)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		each(sc.Bytes())
	}
}

type ecmaRegexp regexp2.Regexp

func (re *ecmaRegexp) MatchString(s string) bool {
	ok, err := (*regexp2.Regexp)(re).MatchString(s)
	return err == nil && ok
}
func (re *ecmaRegexp) String() string { return (*regexp2.Regexp)(re).String() }

var seq atomic.Int64

func validator(schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return (*ecmaRegexp)(re), nil
	})
	url := fmt.Sprintf("mem://s%d.json", seq.Add(1))
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

func validate(s *jsonschema.Schema, out string) error {
	x, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(out)))
	if err != nil {
		return err
	}
	return s.Validate(x)
}

// bfclTypes maps BFCL's Python-flavoured parameter types to JSON Schema.
func bfclTypes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "type" {
				if s, ok := e.(string); ok {
					switch s {
					case "dict":
						e = "object"
					case "float":
						e = "number"
					case "tuple", "list":
						e = "array"
					case "bool":
						e = "boolean"
					case "any":
						continue
					}
				}
			}
			out[k] = bfclTypes(e)
		}
		return out
	case []any:
		for i := range x {
			x[i] = bfclTypes(x[i])
		}
	}
	return v
}

type bfclQ struct {
	ID       string `json:"id"`
	Question [][]struct {
		Role, Content string
	} `json:"question"`
	Function []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

// genOpts bound what a random model can stretch (strings, lists): the
// grammar's language stays a subset of the schema's.
var genOpts = grammar.Options{Strict: true, MaxStringBytes: 48, MaxContainerItems: 4}

type tally struct {
	n, valid, sampled, forced int
	tokens                    []int
	dur                       time.Duration
}

func (ty *tally) add(r *Result) {
	ty.n++
	ty.sampled += r.Sampled
	ty.forced += r.Forced
	ty.dur += r.Total
}

func (ty *tally) report(t *testing.T, name string) {
	t.Logf("%s: %d/%d valid, tokens %d sampled + %d forced (forced fraction %.3f), %.0f ms a call",
		name, ty.valid, ty.n, ty.sampled, ty.forced, float64(ty.forced)/float64(max(1, ty.sampled+ty.forced)),
		float64(ty.dur.Milliseconds())/float64(max(1, ty.n)))
}

// bfclSample spreads n questions over four BFCL categories.
func bfclSample(t testing.TB, n int) []bfclQ {
	var qs []bfclQ
	for _, cat := range []string{"simple_python", "multiple", "live_simple", "live_multiple"} {
		var all []bfclQ
		readGz(t, filepath.Join(dataDir(), "bfcl", cat+".jsonl.gz"), func(b []byte) {
			var q bfclQ
			if err := json.Unmarshal(b, &q); err != nil {
				t.Fatal(err)
			}
			all = append(all, q)
		})
		k := (n + 3) / 4
		for i := 0; i < k && i < len(all); i++ {
			qs = append(qs, all[i*len(all)/k])
		}
	}
	return qs
}

// bfclRequest is one question's tools, messages and full-schema validator.
func bfclRequest(t testing.TB, q bfclQ) ([]grammar.ToolSchema, []selector.Message, *jsonschema.Schema) {
	var tools []grammar.ToolSchema
	var oneOf []any
	var msgs []selector.Message
	var sys bytes.Buffer
	sys.WriteString("Answer with one tool call as JSON.\nTools:\n")
	for _, f := range q.Function {
		p := bfclTypes(f.Parameters).(map[string]any)
		pb, _ := json.Marshal(p)
		tools = append(tools, grammar.ToolSchema{Name: f.Name, Parameters: pb})
		oneOf = append(oneOf, map[string]any{"type": "object", "required": []string{"function", "arguments"}, "additionalProperties": false,
			"properties": map[string]any{"function": map[string]any{"const": f.Name}, "arguments": p}})
		fmt.Fprintf(&sys, "- %s: %s %s\n", f.Name, f.Description, pb)
	}
	oneOf = append(oneOf, map[string]any{"type": "object", "required": []string{"function", "arguments"}, "additionalProperties": false,
		"properties": map[string]any{"function": map[string]any{"const": "none"}, "arguments": map[string]any{"type": "object", "maxProperties": 0}}})
	full, _ := json.Marshal(map[string]any{"oneOf": oneOf})
	v, err := validator(full)
	if err != nil {
		t.Fatalf("%s: validator: %v", q.ID, err)
	}
	msgs = append(msgs, selector.Message{Role: "system", Content: sys.String()})
	for _, m := range q.Question[0] {
		msgs = append(msgs, selector.Message{Role: m.Role, Content: m.Content})
	}
	return tools, msgs, v
}

// progress logs each valid output as it comes (-v streams it): on a
// realistic-size model a run takes hours, and a line a request shows how far
// it got and at what pace.
func progress(t *testing.T, id string, r *Result) {
	t.Logf("%s: valid, %d sampled + %d forced tokens, %v", id, r.Sampled, r.Forced, r.Total.Round(time.Millisecond))
}

func TestBFCLToolCallsValid(t *testing.T) {
	e := tinyEngine(t)
	qs := bfclSample(t, envInt("INPROC_BFCL_N", 30))
	var ty tally
	for qi, q := range qs {
		tools, msgs, v := bfclRequest(t, q)
		g, err := grammar.ToolCall(tools, grammar.ToolCallOptions{AllowNone: true, Options: genOpts})
		if err != nil {
			t.Logf("%s: the grammar refuses the tools (not counted): %v", q.ID, err)
			continue
		}
		s := Sampling{Temperature: 0.8, TopP: 0.95, Seed: uint64(qi + 1)}
		if qi%3 == 0 {
			s = Sampling{} // greedy
		}
		r, err := e.Constrained(context.Background(), ChatPrompt(msgs), g, s, nil)
		if err != nil {
			t.Errorf("%s: %v", q.ID, err)
			continue
		}
		ty.add(r)
		if err := validate(v, r.Text); err != nil {
			t.Errorf("%s: invalid output %s: %v", q.ID, r.Text, err)
			continue
		}
		ty.valid++
		progress(t, q.ID, r)
	}
	ty.report(t, "BFCL")
	if ty.n == 0 || ty.valid != ty.n {
		t.Fatalf("BFCL: %d of %d valid", ty.valid, ty.n)
	}
}

func TestJSONSchemaBenchValid(t *testing.T) {
	e := tinyEngine(t)
	n := envInt("INPROC_JSB_N", 30)
	// every subset, the schemas evenly spaced in each (the hard subsets carry
	// the forms enforced exactly: not, oneOf, uniqueItems, lookahead)
	paths, _ := filepath.Glob(filepath.Join(dataDir(), "jsonschemabench", "*.jsonl.gz"))
	var files []string
	for _, p := range paths {
		files = append(files, strings.TrimSuffix(filepath.Base(p), ".jsonl.gz"))
	}
	if len(files) == 0 {
		t.Fatalf("no JSONSchemaBench under %s (set DATA_DIR)", dataDir())
	}
	var ty tally
	refused := 0
	for _, f := range files {
		var recs []json.RawMessage
		readGz(t, filepath.Join(dataDir(), "jsonschemabench", f+".jsonl.gz"), func(b []byte) {
			var r struct {
				Schema json.RawMessage `json:"schema"`
			}
			if json.Unmarshal(b, &r) == nil {
				recs = append(recs, r.Schema)
			}
		})
		k := (n + len(files) - 1) / len(files)
		for i := 0; i < k && i < len(recs); i++ {
			schema := recs[i*len(recs)/k]
			id := fmt.Sprintf("%s#%d", f, i*len(recs)/k)
			// INPROC_JSB_ID=a,b runs only those schemas of the sample (a
			// re-run of one schema with another budget)
			if ids := os.Getenv("INPROC_JSB_ID"); ids != "" && !slices.Contains(strings.Split(ids, ","), id) {
				continue
			}
			v, err := validator(schema)
			if err != nil {
				refused++
				t.Logf("%s: the reference validator refuses the schema (not counted): %v", id, err)
				continue
			}
			g, err := grammar.Compile(schema, genOpts)
			if err != nil {
				refused++
				t.Logf("%s: the grammar refuses the schema (not counted): %v", id, err)
				continue
			}
			// The prompt shows the schema's start (random weights do not read it;
			// it keeps the prompt realistic and within the context).
			shown := schema
			if len(shown) > 1500 {
				shown = shown[:1500]
			}
			prompt := ChatPrompt([]selector.Message{{Role: "user", Content: "Write one JSON value that follows this schema: " + string(shown)}})
			// INPROC_JSB_MAX_TOKENS caps each output (default: the rest of the
			// context): on a realistic-shape model at ~200 ms a token, one
			// output that runs to thousands of tokens stalls the whole run.
			r, err := e.Constrained(context.Background(), prompt, g, Sampling{Temperature: 0.8, TopP: 0.95, Seed: uint64(i + 7),
				MaxTokens: envInt("INPROC_JSB_MAX_TOKENS", 0)}, nil)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				continue
			}
			ty.add(r)
			if err := validate(v, r.Text); err != nil {
				t.Errorf("%s: invalid output %s: %v", id, r.Text, err)
				continue
			}
			ty.valid++
			progress(t, id, r)
		}
	}
	ty.report(t, "JSONSchemaBench")
	t.Logf("JSONSchemaBench: %d schemas refused (grammar or validator) and not counted", refused)
	if ty.n == 0 || ty.valid != ty.n {
		t.Fatalf("JSONSchemaBench: %d of %d valid", ty.valid, ty.n)
	}
}
