package chains

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// A chain's step runs on a provider its caller may reach when the tool has
// several: the Manager ranks among those, so a higher-trust provider the
// caller may not use does not make the step fail.
func TestManagerStepUsesReachableProvider(t *testing.T) {
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	for _, p := range []struct {
		id    string
		trust pipeline.TrustLevel
	}{{"system", pipeline.TL3}, {"community", pipeline.TL0}} {
		tl := pipeline.Tool{Name: "whoami", Version: "1.0.0", Trust: p.trust, LatencyClass: pipeline.Fast, Idempotent: true,
			Parameters: json.RawMessage(`{"type":"object"}`)}
		id := p.id
		h := pipeline.HandlerFunc(func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
			return json.Marshal(id)
		})
		if err := reg.Register(id, tl, h); err != nil {
			t.Fatal(err)
		}
	}
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"bob": {"community"}, "alice": {"*"}}}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	c := mustParse(t, "steps:\n  - id: w\n    tool: whoami\noutput: \"{{steps.w.output}}\"\n")
	for caller, want := range map[string]string{"bob": `"community"`, "alice": `"system"`} {
		o := Options{Executor: m, Catalog: RegistryCatalog{Registry: reg, Policy: policy}, Caller: caller, MaxParallel: 1}
		if err := c.Validate(o.Catalog, caller); err != nil {
			t.Fatalf("%s: validate: %v", caller, err)
		}
		res, err := Run(context.Background(), c, nil, o)
		if err != nil {
			t.Fatalf("%s: %v", caller, err)
		}
		jsonEq(t, res.Output, want)
	}
}
