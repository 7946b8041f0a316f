package ollamamodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/selector"
)

// errClient is an ollama.Client whose Chat records its request, streams
// one chunk and fails with err.
type errClient struct {
	ollama.Client
	err error
	req ollama.ChatRequest
}

func (c *errClient) Chat(ctx context.Context, req ollama.ChatRequest, on func(string) error) (ollama.ChatResponse, error) {
	c.req = req
	if err := on("{"); err != nil {
		return ollama.ChatResponse{}, err
	}
	return ollama.ChatResponse{}, c.err
}

// The adapter sends the selector's request as the selector used to send it
// (temperature 0, the seed, the limits) and makes Ollama's errors match the
// selector's sentinels without changing their text.
func TestAdapter(t *testing.T) {
	if New(nil) != nil {
		t.Fatal("New(nil) is not nil: a nil client must stay no-LLM mode")
	}
	req := selector.ModelRequest{Model: "m", Messages: []selector.Message{{Role: "user", Content: "hi"}},
		Format: []byte(`{"type":"object"}`), Seed: 42, NumCtx: 8192, NumPredict: 1024}
	for _, tc := range []struct {
		err       error
		sentinel  error
		ollamaErr error
	}{
		{fmt.Errorf("dial: %w", ollama.ErrUnavailable), selector.ErrModelUnavailable, ollama.ErrUnavailable},
		{&ollama.ServerError{StatusCode: http.StatusNotFound, Message: "model 'm' not found"}, selector.ErrModelNotFound, ollama.ErrModelNotFound},
		{errors.Join(ollama.ErrTruncated, ollama.ErrRepeatLimit), selector.ErrModelRepeatLimit, ollama.ErrRepeatLimit},
		{errors.New("boom"), nil, nil},
		{nil, nil, nil},
	} {
		c := &errClient{err: tc.err}
		var chunks []string
		err := New(c).Generate(context.Background(), req, func(s string) error { chunks = append(chunks, s); return nil })
		if (err == nil) != (tc.err == nil) || err != nil && err.Error() != tc.err.Error() {
			t.Errorf("%v: got %v, want the same error text", tc.err, err)
		}
		if tc.sentinel != nil && (!errors.Is(err, tc.sentinel) || !errors.Is(err, tc.ollamaErr)) {
			t.Errorf("%v: matches %v: %v, %v: %v", tc.err, tc.sentinel, errors.Is(err, tc.sentinel), tc.ollamaErr, errors.Is(err, tc.ollamaErr))
		}
		for _, s := range []error{selector.ErrModelUnavailable, selector.ErrModelNotFound, selector.ErrModelRepeatLimit} {
			if s != tc.sentinel && errors.Is(err, s) {
				t.Errorf("%v also matches %v", tc.err, s)
			}
		}
		r := c.req
		if r.Model != "m" || len(r.Messages) != 1 || r.Messages[0] != (ollama.Message{Role: "user", Content: "hi"}) || string(r.Format) != `{"type":"object"}` ||
			r.Options.Temperature == nil || *r.Options.Temperature != 0 || r.Options.Seed == nil || *r.Options.Seed != 42 ||
			r.Options.NumCtx != 8192 || r.Options.NumPredict != 1024 {
			t.Errorf("sent %+v", r)
		}
		if len(chunks) != 1 {
			t.Errorf("chunks %q, want the streamed one", chunks)
		}
	}
	// A chunk callback's error comes back as is, so the selector can tell
	// its own stops (grammar, runaway) from the backend's.
	stop := errors.New("stop")
	if err := New(&errClient{}).Generate(context.Background(), req, func(string) error { return stop }); err != stop {
		t.Errorf("callback error came back as %v", err)
	}
}
