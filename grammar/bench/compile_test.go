package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/grammar/export"
)

func TestCompile(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)
	c, err := Compile(CompileRequest{Schema: schema})
	if err != nil || c.Grammar == nil || c.Exported != "" || c.CompileTime <= 0 {
		t.Fatalf("compile: %+v %v", c, err)
	}
	if !c.Grammar.Match([]byte(`{"n":3}`)) || c.Grammar.Match([]byte(`{"n":"x"}`)) {
		t.Error("the compiled grammar does not enforce the schema")
	}
	g, err := Compile(CompileRequest{Schema: schema, Export: "gbnf"})
	if err != nil || g.Grammar != nil || !strings.Contains(g.Exported, "root") {
		t.Fatalf("gbnf: %+v %v", g, err)
	}
	j, err := Compile(CompileRequest{Schema: schema, Export: "json-schema"})
	if err != nil || !strings.HasPrefix(j.Exported, "{\n  ") || !strings.HasSuffix(j.Exported, "}\n") {
		t.Fatalf("json-schema (indented, one newline): %+v %v", j, err)
	}
	tools := []export.Tool{{Name: "add", Parameters: schema}, {Name: "neg", Parameters: schema}}
	tc, err := Compile(CompileRequest{Tools: tools, AllowNone: true})
	if err != nil || tc.Grammar == nil || tc.BuildTime <= 0 {
		t.Fatalf("tools: %+v %v", tc, err)
	}
	if _, err := Compile(CompileRequest{Schema: schema, Export: "yaml"}); err == nil || !strings.Contains(err.Error(), "gbnf or json-schema") {
		t.Errorf("unknown export: %v", err)
	}
	if _, err := Compile(CompileRequest{Schema: []byte(`{"type":`)}); err == nil {
		t.Error("malformed schema compiled")
	}
	// Lenient compilation reports what it loosened.
	loose := []byte(`{"type":"string","pattern":"(?<=a)b"}`)
	if l, err := Compile(CompileRequest{Schema: loose, Options: grammar.Options{Lenient: true}}); err != nil || len(l.Loosened) == 0 {
		t.Errorf("lenient: %+v %v", l, err)
	}
}

func TestRunSuite(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("type.json", `[{"description":"integer","schema":{"type":"integer"},"tests":[
		{"description":"1","data":1,"valid":true},{"description":"s","data":"s","valid":false}]}]`)
	write("enum.json", `[{"description":"enum","schema":{"enum":[1,2]},"tests":[{"description":"3","data":3,"valid":false}]}]`)
	res, err := RunSuite(dir, grammar.Options{}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].File != "enum" || res[1].File != "type" {
		t.Fatalf("files not in name order: %+v", res)
	}
	if r := res[1]; r.ValidAccepted != 1 || r.InvalidRejected != 1 || r.Compiled != 1 {
		t.Errorf("type.json: %+v", r)
	}
	if _, err := RunSuite(t.TempDir(), grammar.Options{}, time.Second); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Errorf("empty dir: %v", err)
	}
}
