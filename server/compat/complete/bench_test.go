package complete_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/server"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/server/compat/complete"
)

// BenchmarkCompatOverhead measures what the compatibility layer adds to a
// call: "direct" is the Backend's Complete on the translated request;
// "openai" and "ollama" are the same request as a client sends it, through
// the server's handler (authentication, rate limit, decoding the 50 tools,
// translating, encoding the answer), without the network. Each reports its
// p50 (p50-ns); the overhead is endpoint p50 − direct p50.
func BenchmarkCompatOverhead(b *testing.B) {
	ctx := context.Background()
	cb, err := complete.New(ctx, complete.Options{RequireEvidence: true})
	if err != nil {
		b.Fatal(err)
	}
	s := server.New(&hostBackend{}, server.Config{Tokens: []server.Token{{SHA256: server.HashToken(token), Agent: "alice"}}})
	compat.Mount(s, cb, compat.Options{})
	body := weatherRequest(b, nil)
	oai, _ := json.Marshal(body)
	body["stream"] = false
	ol, _ := json.Marshal(body)
	var tools []compat.Tool
	for _, t := range tools50(b) {
		f := t.(map[string]any)["function"].(map[string]any)
		p, _ := json.Marshal(f["parameters"])
		tools = append(tools, compat.Tool{Name: f["name"].(string), Description: f["description"].(string), Parameters: p})
	}
	req := &compat.Request{Model: "none", Tools: tools, Choice: compat.ToolChoice{Mode: compat.ChoiceAuto}, Parallel: true,
		Messages: []compat.Message{{Role: "user", Content: "What is the weather forecast in Paris today?"}}}
	through := func(path string, payload []byte) func() {
		return func() {
			r := httptest.NewRequest("POST", path, bytes.NewReader(payload))
			r.Header.Set("Authorization", "Bearer "+token)
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("%s: %d %s", path, w.Code, w.Body)
			}
		}
	}
	cases := []struct {
		name string
		run  func()
	}{
		{"direct", func() {
			if _, err := cb.Complete(ctx, "alice", req, nil); err != nil {
				b.Fatal(err)
			}
		}},
		{"openai", through("/v1/chat/completions", oai)},
		{"ollama", through("/api/chat", ol)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			c.run() // the tool set indexed once, as a client's second turn finds it
			d := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				c.run()
				d = append(d, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(d)
			b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns")
		})
	}
}
