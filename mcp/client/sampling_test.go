//go:build unix

package client

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// fakeSampler records what the server asked and answers from the last
// user message, so a test sees the request cross both hops.
type fakeSampler struct {
	mu   sync.Mutex
	got  []SampleRequest
	wait bool // block until the context ends
}

func (f *fakeSampler) Sample(ctx context.Context, req SampleRequest) (SampleResult, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	if f.wait {
		<-ctx.Done()
		return SampleResult{}, ctx.Err()
	}
	last := req.Messages[len(req.Messages)-1].Text
	return SampleResult{Text: "re: " + last, Model: "fake-1", Truncated: req.MaxTokens < 10}, nil
}

func (f *fakeSampler) last(t *testing.T) SampleRequest {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.got) == 0 {
		t.Fatal("the sampler was not asked")
	}
	return f.got[len(f.got)-1]
}

func TestSamplingAnsweredByTheModel(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.MaxSampleTokens = 50 })
	f := &fakeSampler{}
	h.conn.SetSampler(f)

	res, err := h.call("sample", `{"text":"hello","max_tokens":20}`, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Text, Model, Stop string }
	if err := json.Unmarshal(res.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out.Text != "re: hello" || out.Model != "fake-1" || out.Stop != "endTurn" {
		t.Fatalf("the server got %+v", out)
	}
	req := f.last(t)
	if req.System != "Be brief." || len(req.Messages) != 1 || req.Messages[0].Role != "user" || req.MaxTokens != 20 {
		t.Fatalf("the sampler got %+v", req)
	}

	// A server asking for more than the cap gets the cap.
	if _, err := h.call("sample", `{"text":"long","max_tokens":100000}`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := f.last(t).MaxTokens; got != 50 {
		t.Fatalf("max tokens %d, want the cap 50", got)
	}
	// No maxTokens (0) is the cap too, not unlimited.
	if _, err := h.call("sample", `{"text":"any"}`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := f.last(t).MaxTokens; got != 50 {
		t.Fatalf("max tokens %d with none asked, want the cap 50", got)
	}
	// A reply cut at the limit says so.
	res, err = h.call("sample", `{"text":"cut","max_tokens":5}`, 10*time.Second)
	if err != nil || !strings.Contains(string(res.Output), `"stop":"maxTokens"`) {
		t.Fatalf("truncated reply: %v %s", err, res.Output)
	}
}

func TestSamplingRefusedWithoutModel(t *testing.T) {
	h := mustStart(t, nil)
	_, err := h.call("sample", `{"text":"hello","max_tokens":20}`, 10*time.Second)
	if pipeline.KindOf(err) != pipeline.KindProviderRejected || !strings.Contains(err.Error(), "no-LLM mode") {
		t.Fatalf("err = %v, want the server to see the no-LLM refusal", err)
	}
	// Setting a model later makes it work; clearing it refuses again.
	h.conn.SetSampler(&fakeSampler{})
	if _, err := h.call("sample", `{"text":"x"}`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	h.conn.SetSampler(nil)
	if _, err := h.call("sample", `{"text":"x"}`, 10*time.Second); err == nil || !strings.Contains(err.Error(), "no-LLM mode") {
		t.Fatalf("after SetSampler(nil): %v", err)
	}
}

func TestSamplingTimeout(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.SampleTimeout = 200 * time.Millisecond })
	h.conn.SetSampler(&fakeSampler{wait: true})
	start := time.Now()
	_, err := h.call("sample", `{"text":"slow"}`, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "took over 200ms") {
		t.Fatalf("err = %v, want the sampling timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the timeout did not stop the model: %v", d)
	}
	h.echoWorks(t)
}

// TestSamplingDisabled: with NoSampling the capability is not advertised
// and the model is never asked, even with a sampler set.
func TestSamplingDisabled(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.NoSampling = true })
	f := &fakeSampler{}
	h.conn.SetSampler(f)
	if _, err := h.call("sample", `{"text":"hello"}`, 10*time.Second); err == nil {
		t.Fatal("sampling answered with sampling disabled")
	}
	f.mu.Lock()
	n := len(f.got)
	f.mu.Unlock()
	if n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	// The refusal itself, should a request reach the handler.
	if _, err := h.conn.sample(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "sampling.enabled: false") {
		t.Fatalf("sample: %v", err)
	}
	h.echoWorks(t)
}
