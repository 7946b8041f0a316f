package grammar

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/jsonptr"
	"github.com/airs-dev/airs/internal/jsonvalue"
)

// TestJSBRefusals groups JSONSchemaBench's compile errors by keyword and the
// shape of the refused sub-schema (set JSB_REFUSALS=1; JSB_REFUSALS_OUT to
// write every refusal, one a line).
func TestJSBRefusals(t *testing.T) {
	if os.Getenv("JSB_REFUSALS") == "" {
		t.Skip("set JSB_REFUSALS=1")
	}
	files, _ := filepath.Glob(filepath.Join(dataDir(), "jsonschemabench", "*.jsonl.gz"))
	if len(files) == 0 {
		t.Skip("no JSONSchemaBench data")
	}
	groups := map[string]int{}
	byKw := map[string]int{}
	var lines []string
	for _, f := range files {
		for _, r := range readJSB(t, f) {
			_, err := Compile(r.Schema, Options{})
			var ce *CompileError
			if err == nil || !errors.As(err, &ce) {
				continue
			}
			byKw[ce.Keyword]++
			shape := "?"
			if root, e := jsonvalue.Parse(r.Schema); e == nil {
				if sub := atPointer(root, ce.Pointer); sub != nil {
					shape = shapeOf(sub)
				}
			}
			msg := ce.Msg
			if len(msg) > 60 {
				msg = msg[:60]
			}
			groups[ce.Keyword+" | "+shape+" | "+msg]++
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%s\t%s", filepath.Base(f), r.ID, ce.Keyword, ce.Pointer, ce.Msg))
		}
	}
	type kv struct {
		k string
		n int
	}
	var g []kv
	for k, n := range groups {
		g = append(g, kv{k, n})
	}
	sort.Slice(g, func(i, j int) bool { return g[i].n > g[j].n || g[i].n == g[j].n && g[i].k < g[j].k })
	for _, x := range g {
		t.Logf("%4d %s", x.n, x.k)
	}
	t.Logf("by keyword: %v", byKw)
	if p := os.Getenv("JSB_REFUSALS_OUT"); p != "" {
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
}

func atPointer(v *jsonvalue.Value, ptr string) *jsonvalue.Value {
	toks, ok := jsonptr.Tokens(ptr)
	if !ok && ptr != "" {
		return nil
	}
	for _, tok := range toks {
		if v == nil {
			return nil
		}
		v, _ = v.Child(tok)
	}
	return v
}

// shapeOf is the sorted keys of a schema object (one level, children's keys
// in brackets for not/if/oneOf branches).
func shapeOf(v *jsonvalue.Value) string {
	switch v.Kind {
	case jsonvalue.Object:
		var ks []string
		for i, k := range v.Keys {
			if annotationKeywords[k] && k != "format" {
				continue
			}
			s := k
			if x := v.Vals[i]; x.Kind == jsonvalue.Object && (k == "not" || k == "if") {
				s += shapeOf(x)
			}
			ks = append(ks, s)
		}
		sort.Strings(ks)
		return "{" + strings.Join(ks, ",") + "}"
	case jsonvalue.Array:
		var ks []string
		for _, x := range v.Vals {
			ks = append(ks, shapeOf(x))
		}
		if len(ks) > 4 {
			ks = append(ks[:4], fmt.Sprintf("…%d", len(v.Vals)))
		}
		return "[" + strings.Join(ks, " ") + "]"
	}
	return fmt.Sprint(v.Kind)
}
