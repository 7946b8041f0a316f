package pipeline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// BenchmarkLevel2History is a call's level-2 cost when its caller has been
// shown a large document (256 KiB, looked through for each argument): a
// summarize call of a 2 KiB text, with level 2 and without (A/B in one run).
func BenchmarkLevel2History(b *testing.B) {
	doc := strings.Repeat("Quarterly figures and a long body of text for the history. ", 4500)[:256<<10]
	arg, _ := json.Marshal(map[string]string{"text": strings.Repeat("a text of the user's own ", 80)})
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			reg := NewRegistry(RegistryConfig{})
			cfg := Config{Registry: reg}
			if on {
				cfg.Level2 = NewLevel2(Level2Options{}, nil)
			}
			m, err := NewManager(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			call := func(tool, params string) error {
				_, err := m.Call(context.Background(), Request{Tool: tool, Params: []byte(params), Caller: "alice"})
				return err
			}
			rd := Tool{Name: "read-file", Version: "1.0.0", ReadOnly: true, LatencyClass: Fast, Parameters: objSchema(`{"space":{"type":"string"},"path":{"type":"string"}}`)}
			reg.Register("builtin", rd, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				return json.Marshal(map[string]string{"text": doc})
			}))
			sum := Tool{Name: "summarize", Version: "1.0.0", ReadOnly: true, LatencyClass: Fast, Parameters: objSchema(`{"text":{"type":"string"}}`)}
			reg.Register("builtin", sum, HandlerFunc(func(context.Context, json.RawMessage, *Call) (json.RawMessage, error) {
				return json.RawMessage(`{"summary":"ok"}`), nil
			}))
			if err := call("read-file", `{"space":"documents","path":"big.txt"}`); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for b.Loop() {
				if err := call("summarize", string(arg)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
