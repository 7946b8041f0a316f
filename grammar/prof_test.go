package grammar

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const glaiveSchema = `{"properties":{"data":{"items":{"properties":{"measurement":{"description":"The type of measurement","type":"string"},"timestamp":{"description":"The timestamp of the measurement","format":"date-time","type":"string"},"value":{"description":"The value of the measurement","type":"number"}},"required":["measurement","value","timestamp"],"type":"object"},"type":"array"}},"required":["data"],"type":"object"}`

func BenchmarkCompileGlaive(b *testing.B) {
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		_, err := Compile([]byte(glaiveSchema), Options{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
}

// BenchmarkCompileGlaiveCold compiles without the rule cache (every DFA
// built and minimized).
func BenchmarkCompileGlaiveCold(b *testing.B) {
	ruleCacheOff = true
	defer func() { ruleCacheOff = false }()
	BenchmarkCompileGlaive(b)
}

func BenchmarkToolCallCached(b *testing.B) {
	tools := bfclTools(b, 60)
	if _, err := ToolCall(tools[:50], ToolCallOptions{AllowNone: true}); err != nil {
		b.Fatal(err)
	}
	sub := append(append([]ToolSchema(nil), tools[5:50]...), tools[:5]...)
	b.ResetTimer()
	c0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := ToolCall(sub, ToolCallOptions{AllowNone: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
}

// toolCallOptions are the option sets the tool-call benchmarks measure:
// the package defaults; Strict; the selector's (selector.ToolCallGrammar:
// Strict and Lenient, compact — what a request builds); and flexible
// whitespace in the automata (what the selector's output check used before
// WhitespaceChecker).
var toolCallOptions = []struct {
	name string
	opts Options
}{
	{"default", Options{}},
	{"strict", Options{Strict: true}},
	{"selector", Options{Strict: true, Lenient: true}},
	{"flexible", Options{Strict: true, Whitespace: WhitespaceFlexible, MaxWhitespace: 32, Lenient: true}},
}

// BenchmarkToolCallCold builds the 50-tool grammar with empty caches: no
// per-tool grammar and no rule DFA from an earlier build (what stays is
// what does not depend on any tool: the any-value rules, format automata).
// Three costs per option set:
//
//   - build: ToolCall (every schema parsed and lowered, the root over the
//     names; a tool's automata wait for its name);
//   - first-call: build, then a matcher through one tool's name, which
//     builds that tool (what a request waits for before its first argument
//     token);
//   - eager: every tool built (ToolCallOptions.Eager).
func BenchmarkToolCallCold(b *testing.B) {
	tools := bfclTools(b, 60)[:50]
	clearCaches := func() {
		toolCache.Clear()
		ruleCacheMu.Lock()
		clear(ruleCache)
		ruleCacheMu.Unlock()
	}
	for _, oc := range toolCallOptions {
		for _, mode := range []string{"build", "first-call", "eager"} {
			b.Run(oc.name+"/"+mode, func(b *testing.B) {
				c0 := cpuTime()
				for i := 0; i < b.N; i++ {
					clearCaches()
					g, err := ToolCall(tools, ToolCallOptions{AllowNone: true, Options: oc.opts, Eager: mode == "eager"})
					if err != nil {
						b.Fatal(err)
					}
					if mode == "first-call" {
						t := tools[i%len(tools)]
						m := g.NewMatcher()
						if _, ok := m.AdvanceBytes([]byte(`{"function":` + string(jsonvalue.AppendString(nil, t.Name)) + `,"arguments":`)); !ok || !g.subs[i%len(tools)].built.Load() {
							b.Fatal("name rejected or tool not built")
						}
					}
				}
				b.ReportMetric(float64(cpuTime()-c0)/float64(b.N)/1e3, "cpu-us/op")
			})
		}
	}
}

// TestWriteToolCallSchema writes the 50-tool call grammar of the benchmarks
// above as one JSON Schema (an anyOf of {"function": const, "arguments":
// parameters} objects, plus the "none" choice) in JSONSchemaBench's line
// format, for engines that take only a schema (scripts/peer-toolcall.sh
// gives it to XGrammar). Set TOOLCALL_SCHEMA_OUT=FILE.
func TestWriteToolCallSchema(t *testing.T) {
	out := os.Getenv("TOOLCALL_SCHEMA_OUT")
	if out == "" {
		t.Skip("set TOOLCALL_SCHEMA_OUT=FILE to write the 50-tool call schema")
	}
	tools := bfclTools(t, 60)[:50]
	var branches []any
	call := func(name string, args json.RawMessage) any {
		return map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"function": map[string]any{"const": name}, "arguments": args},
			"required":             []string{"function", "arguments"},
			"additionalProperties": false,
		}
	}
	for _, tl := range tools {
		branches = append(branches, call(tl.Name, tl.Parameters))
	}
	branches = append(branches, call(NoneTool, json.RawMessage(`{"type":"object","maxProperties":0}`)))
	schema := map[string]any{"anyOf": branches}
	g, err := ToolCall(tools, ToolCallOptions{AllowNone: true})
	if err != nil {
		t.Fatal(err)
	}
	valid := []string{`{"function":"none","arguments":{}}`}
	invalid := []string{`{"function":"nope","arguments":{}}`, `{"function":"none","arguments":{"x":1}}`}
	var tests []map[string]any
	for _, s := range valid {
		if !g.Match([]byte(s)) {
			t.Fatalf("%s rejected by ToolCall", s)
		}
		tests = append(tests, map[string]any{"valid": true, "data": json.RawMessage(s)})
	}
	for _, s := range invalid {
		if g.Match([]byte(s)) {
			t.Fatalf("%s accepted by ToolCall", s)
		}
		tests = append(tests, map[string]any{"valid": false, "data": json.RawMessage(s)})
	}
	line, err := json.Marshal(map[string]any{"id": "bfcl-toolcall-50", "schema": schema, "tests": tests})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(line))
}

// BenchmarkCompileJSBSample compiles every 20th schema of JSONSchemaBench
// (about 450, all subsets; DATA_DIR), each once per iteration in order,
// with the rule cache cleared at the start of each iteration (as one bench
// run sees them, caches warming over the run). Reports the median compile
// time over the sample (the bench's compile p50) beside the total.
func BenchmarkCompileJSBSample(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(dataDir(), "jsonschemabench", "*.jsonl.gz"))
	if len(files) == 0 {
		b.Skip("no jsonschemabench under DATA_DIR")
	}
	var schemas [][]byte
	k := 0
	// JSB_MID=1: only the schemas whose compile is near the median (a
	// profile of what the p50 is made of, not of the largest schemas)
	mid := os.Getenv("JSB_MID") != ""
	for _, f := range files {
		for _, r := range readJSB(b, f) {
			if k%20 == 0 {
				t0 := time.Now()
				if _, err := Compile(r.Schema, Options{}); err == nil {
					if d := time.Since(t0); !mid || d > 500*time.Microsecond && d < 4*time.Millisecond {
						schemas = append(schemas, r.Schema)
					}
				}
			}
			k++
		}
	}
	b.ResetTimer()
	var per []float64
	for i := 0; i < b.N; i++ {
		ruleCacheMu.Lock()
		clear(ruleCache)
		ruleCacheMu.Unlock()
		for _, s := range schemas {
			t0 := time.Now()
			if _, err := Compile(s, Options{}); err != nil {
				b.Fatal(err)
			}
			per = append(per, float64(time.Since(t0).Microseconds())/1e3)
		}
	}
	sort.Float64s(per)
	b.ReportMetric(per[len(per)/2], "p50-ms")
	b.ReportMetric(float64(len(schemas)), "schemas")
}
