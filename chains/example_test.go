package chains_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// A YAML pipeline: split a text into words, measure each word in parallel
// (foreach), then sum the lengths. Every call takes the pipeline's seven
// stages through the Manager, the chain's Executor.
func Example() {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	tool := func(name, params string, h func(map[string]any) any) {
		t := pipeline.Tool{Name: name, Version: "1.0.0", Description: name, Parameters: json.RawMessage(params),
			Trust: pipeline.TL2, LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true}
		err := reg.Register("example", t, pipeline.HandlerFunc(func(_ context.Context, p json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
			var in map[string]any
			if err := json.Unmarshal(p, &in); err != nil {
				return nil, err
			}
			return json.Marshal(h(in))
		}))
		if err != nil {
			panic(err)
		}
	}
	tool("split", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, func(in map[string]any) any {
		return map[string]any{"words": strings.Fields(in["text"].(string))}
	})
	tool("length", `{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`, func(in map[string]any) any {
		return len(in["word"].(string))
	})
	tool("sum", `{"type":"object","properties":{"numbers":{"type":"array","items":{"type":"integer"}}},"required":["numbers"]}`, func(in map[string]any) any {
		total := 0.0
		for _, n := range in["numbers"].([]any) {
			total += n.(float64)
		}
		return map[string]any{"total": total}
	})
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer m.Close()

	c, err := chains.Parse("letters.yaml", []byte(`
pipeline: letters
inputs:
  text: {type: string}
steps:
  - id: words
    tool: split
    params: {text: "{{input.text}}"}
  - id: lengths
    tool: length
    foreach: "{{steps.words.output.words}}"
    params: {word: "{{item}}"}
  - id: total
    tool: sum
    params: {numbers: "{{steps.lengths.output}}"}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := chains.Run(context.Background(), c, map[string]any{"text": "tools used reliably"},
		chains.Options{Executor: m, Catalog: chains.RegistryCatalog{Registry: reg}, Caller: "alice"})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := res.Outputs()
	fmt.Println("lengths:", string(out["lengths"]))
	fmt.Println("output:", string(res.Output))
	// Output:
	// lengths: [5,4,8]
	// output: {"total":17}
}
