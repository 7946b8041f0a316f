package grammar

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestToolCall(t *testing.T) {
	tools := []ToolSchema{
		{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"],"additionalProperties":false}`)},
		{Name: "get", Parameters: []byte(`{"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}`)},
	}
	g, err := ToolCall(tools, ToolCallOptions{AllowNone: true})
	if err != nil {
		t.Fatal(err)
	}
	ok := []string{
		`{"function":"get_weather","arguments":{"city":"Paris"}}`,
		`{"function":"get_weather","arguments":{"days":3,"city":"Oslo"}}`,
		`{"function":"get","arguments":{"url":"https://example.com/x?y=1"}}`,
		`{"function":"none","arguments":{}}`,
	}
	bad := []string{
		`{"function":"get_weather","arguments":{"url":"https://example.com"}}`, // other tool's schema
		`{"function":"get_weather","arguments":{"city":"Paris","days":8}}`,
		`{"function":"get","arguments":{"city":"Paris"}}`,
		`{"function":"nope","arguments":{}}`,
		`{"function":"none","arguments":{"x":1}}`,
	}
	for _, s := range ok {
		if !g.Match([]byte(s)) {
			t.Errorf("should accept %s", s)
		}
	}
	for _, s := range bad {
		if g.Match([]byte(s)) {
			t.Errorf("should reject %s", s)
		}
	}
	// the same tools again come from the cache and give the same language
	g2, err := ToolCall(tools[1:], ToolCallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !g2.Match([]byte(ok[2])) || g2.Match([]byte(ok[0])) || g2.Match([]byte(ok[3])) {
		t.Error("subset grammar wrong")
	}
	if _, err := ToolCall([]ToolSchema{{Name: "a"}, {Name: "a"}}, ToolCallOptions{}); err == nil {
		t.Error("duplicate names accepted")
	}
}

// bfclTypes maps BFCL's Python-flavoured types to JSON Schema.
func bfclTypes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = bfclTypes(e)
		}
		if t, ok := out["type"].(string); ok {
			switch t {
			case "dict":
				out["type"] = "object"
			case "float":
				out["type"] = "number"
			case "tuple":
				out["type"] = "array"
			case "any":
				delete(out, "type")
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = bfclTypes(e)
		}
		return out
	}
	return v
}

func bfclTools(t testing.TB, n int) []ToolSchema {
	f, err := os.Open(filepath.Join(dataDir(), "bfcl", "live_multiple.jsonl.gz"))
	if err != nil {
		t.Skip("no BFCL data under DATA_DIR")
	}
	defer f.Close()
	zr, _ := gzip.NewReader(f)
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	seen := map[string]bool{}
	var out []ToolSchema
	for sc.Scan() && len(out) < n {
		var rec struct {
			Function []struct {
				Name       string `json:"name"`
				Parameters any    `json:"parameters"`
			} `json:"function"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		for _, fn := range rec.Function {
			if seen[fn.Name] || len(out) >= n {
				continue
			}
			p, _ := json.Marshal(bfclTypes(fn.Parameters))
			if _, err := Compile(p, Options{}); err != nil {
				continue
			}
			seen[fn.Name] = true
			out = append(out, ToolSchema{Name: fn.Name, Parameters: p})
		}
	}
	return out
}

// TestToolCallBFCL50 times the tool-call grammar over 50 BFCL tools, cold
// (each tool compiled) and cached (a new subset of seen tools).
func TestToolCallBFCL50(t *testing.T) {
	tools := bfclTools(t, 60)
	if len(tools) < 50 {
		t.Skipf("only %d BFCL tools", len(tools))
	}
	toolCache.Clear()
	ruleCacheMu.Lock()
	clear(ruleCache) // cold: no rule DFAs from earlier tests
	ruleCacheMu.Unlock()
	t0 := time.Now()
	g, err := ToolCall(tools[:50], ToolCallOptions{AllowNone: true})
	cold := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	best := time.Hour
	for i := 0; i < 5; i++ {
		sub := append(append([]ToolSchema(nil), tools[5:50]...), tools[:5]...)
		t0 = time.Now()
		if _, err := ToolCall(sub, ToolCallOptions{AllowNone: true}); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(t0))
	}
	t.Logf("50 BFCL tools: cold %v, cached %v (%v)", cold, best, g.Stats())
	if !g.Match([]byte(`{"function":"none","arguments":{}}`)) {
		t.Error("none rejected")
	}
}
