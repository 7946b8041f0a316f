package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/airs-dev/airs/pipeline"
)

// rejectCode returns the ProviderRejected code of err, "" if it is not one.
func rejectCode(err error) string {
	var pr *pipeline.ProviderRejected
	if errors.As(err, &pr) {
		return pr.Code
	}
	return ""
}

// testTools builds the builtin tools over the given spaces, with grants
// for the agents "alice" (documents only) and "root" (every space).
func testTools(t *testing.T, spaces map[string]string) map[string]Entry {
	t.Helper()
	entries, err := Tools(Options{Spaces: spaces, Policy: testPolicy})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Entry{}
	for _, e := range entries {
		m[e.Tool.Name] = e
	}
	return m
}

var testPolicy = &pipeline.StaticPolicy{
	Channels: map[string][]string{"*": {"*"}},
	Capabilities: map[string][]pipeline.Capability{
		"alice": {{Kind: KindReadSpace, Arg: "documents"}, {Kind: "Network", Arg: "*"}},
		"root":  {{Kind: KindReadSpace, Arg: "*"}},
		// editor may delete in documents (and only there).
		"editor": {{Kind: KindReadSpace, Arg: "documents"}, {Kind: KindWriteSpace, Arg: "documents"}},
	},
}

// invoke calls a tool's handler as agent and, on success, checks the output
// against the tool's return_schema.
func invoke(t *testing.T, e Entry, agent string, params any) (json.RawMessage, error) {
	t.Helper()
	b, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Handler.Invoke(context.Background(), b, &pipeline.Call{ID: "t", Tool: e.Tool.Name, Provider: ProviderID, Caller: agent})
	if err == nil {
		checkAgainst(t, e.Tool.Name+" return_schema", e.Tool.ReturnSchema, out)
	}
	return out, err
}

// checkAgainst validates doc against a JSON Schema with the same library
// the pipeline uses.
func checkAgainst(t *testing.T, what string, schema, doc json.RawMessage) {
	t.Helper()
	sch, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("mem://schema.json", sch); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	compiled, err := c.Compile("mem://schema.json")
	if err != nil {
		t.Fatalf("%s: compile: %v", what, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		t.Fatalf("%s: output is not JSON: %v", what, err)
	}
	if err := compiled.Validate(v); err != nil {
		t.Fatalf("%s: output %s does not validate: %v", what, doc, err)
	}
}

func decode[T any](t *testing.T, b json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
