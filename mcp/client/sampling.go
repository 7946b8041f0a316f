package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sampling: a server's sampling/createMessage is answered by AIRS's model
// (the engine sets a Sampler once it has probed Ollama). The client always
// advertises the capability, because servers connect before the engine
// knows whether a model answers; without a Sampler (no-LLM mode) each
// request is refused with an error that says so and what to do.

// Default bounds of one sampling request: a server asks for maxTokens and
// gets at most MaxSampleTokens; the model gets SampleTimeout.
const (
	DefaultMaxSampleTokens = 1024
	DefaultSampleTimeout   = 60 * time.Second
)

// ErrNoModel is the refusal of a sampling request in no-LLM mode.
var ErrNoModel = errors.New("AIRS has no model to answer sampling/createMessage (no-LLM mode, or a command such as `airs call` that runs no model): set ollama.model in airs.yaml, start Ollama, and use airs chat, serve or run")

// Sampler is the model that answers sampling requests. It sees text only:
// the model path of AIRS is text in, text out.
type Sampler interface {
	Sample(ctx context.Context, req SampleRequest) (SampleResult, error)
}

// SampleMessage is one message of a sampling request.
type SampleMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// SampleRequest is a server's request, with AIRS's limits applied.
type SampleRequest struct {
	System      string
	Messages    []SampleMessage
	MaxTokens   int      // already capped at the server's MaxSampleTokens
	Temperature *float64 // nil: the model's default
	Stop        []string
}

// SampleResult is the model's reply.
type SampleResult struct {
	Text  string
	Model string
	// Truncated is true when the reply stopped at MaxTokens.
	Truncated bool
}

func (s Server) maxSampleTokens() int {
	return cmp.Or(max(s.MaxSampleTokens, 0), DefaultMaxSampleTokens)
}
func (s Server) sampleTimeout() time.Duration {
	return cmp.Or(max(s.SampleTimeout, 0), DefaultSampleTimeout)
}

// SetSampler sets the model that answers the server's sampling requests
// (nil: refuse them, as in no-LLM mode).
func (c *Conn) SetSampler(s Sampler) {
	if s == nil {
		c.sampler.Store(nil)
		return
	}
	c.sampler.Store(&s)
}

// SampleError is a sampling request AIRS refused or could not answer. The
// go-sdk answers a server's input request (SEP-2322) inside CallTool, so
// the call fails with it: invoke must tell it from a broken connection.
type SampleError struct{ Err error }

func (e *SampleError) Error() string { return e.Err.Error() }
func (e *SampleError) Unwrap() error { return e.Err }

// createMessage is the go-sdk's CreateMessageHandler.
func (c *Conn) createMessage(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	res, err := c.sample(ctx, req)
	if err != nil {
		return nil, &SampleError{err}
	}
	return res, nil
}

func (c *Conn) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if c.srv.NoSampling {
		return nil, fmt.Errorf("mcp server %s asked for sampling, which airs.yaml turns off for it (mcp.servers.%s.sampling.enabled: false)", c.srv.Name, c.srv.Name)
	}
	sp := c.sampler.Load()
	if sp == nil {
		return nil, fmt.Errorf("mcp server %s asked for sampling: %w", c.srv.Name, ErrNoModel)
	}
	p := req.Params
	if p == nil || len(p.Messages) == 0 {
		return nil, errors.New("sampling/createMessage has no messages: send at least one")
	}
	sr := SampleRequest{System: p.SystemPrompt, Stop: p.StopSequences, MaxTokens: c.srv.maxSampleTokens()}
	if p.MaxTokens > 0 && p.MaxTokens < int64(sr.MaxTokens) {
		sr.MaxTokens = int(p.MaxTokens)
	}
	if p.Temperature != 0 {
		t := p.Temperature
		sr.Temperature = &t
	}
	for i, m := range p.Messages {
		t, ok := m.Content.(*mcp.TextContent)
		if !ok {
			return nil, fmt.Errorf("sampling/createMessage message %d is not text (%T): AIRS's model reads text only; send text content", i, m.Content)
		}
		sr.Messages = append(sr.Messages, SampleMessage{Role: string(m.Role), Text: t.Text})
	}
	sctx, cancel := context.WithTimeout(ctx, c.srv.sampleTimeout())
	defer cancel()
	res, err := (*sp).Sample(sctx, sr)
	if err != nil {
		if sctx.Err() != nil && ctx.Err() == nil {
			return nil, fmt.Errorf("sampling for mcp server %s took over %v and was stopped: ask for fewer tokens", c.srv.Name, c.srv.sampleTimeout())
		}
		return nil, fmt.Errorf("sampling for mcp server %s: %v", c.srv.Name, err)
	}
	stop := "endTurn"
	if res.Truncated {
		stop = "maxTokens"
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: res.Text}, Model: res.Model, Role: "assistant", StopReason: stop}, nil
}
