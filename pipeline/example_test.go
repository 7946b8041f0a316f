package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/airs-dev/airs/pipeline"
)

// A tool is a description (its parameters a JSON Schema) and a handler;
// every call of it takes the Manager's seven stages, so arguments the
// schema refuses never reach the handler.
func Example() {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	add := pipeline.Tool{
		Name:        "add",
		Version:     "1.0.0",
		Description: "Add two integers.",
		Parameters: json.RawMessage(`{"type": "object",
			"properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
			"required": ["a", "b"], "additionalProperties": false}`),
		Trust: pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true,
	}
	err := reg.Register("example", add, pipeline.HandlerFunc(
		func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
			var p struct{ A, B int }
			if err := json.Unmarshal(params, &p); err != nil {
				return nil, err
			}
			return json.Marshal(map[string]int{"sum": p.A + p.B})
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	// No Policy: every caller may call every tool (a single-user CLI); a
	// shared server sets a StaticPolicy.
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()

	for _, params := range []string{`{"a": 2, "b": 40}`, `{"a": 2, "b": "forty"}`} {
		res, err := m.Call(context.Background(), pipeline.Request{
			Tool: "add", Params: []byte(params), Encoding: pipeline.JSON, Caller: "alice"})
		if err != nil {
			fmt.Printf("%s: %s, %s\n", params, res.Outcome, pipeline.KindOf(err))
			continue
		}
		fmt.Printf("%s: %s, %s\n", params, res.Outcome, res.Output)
	}
	// Output:
	// {"a": 2, "b": 40}: ok, {"sum":42}
	// {"a": 2, "b": "forty"}: error, schema_validation_failed
}
