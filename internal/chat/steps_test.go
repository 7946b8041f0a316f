package chat

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
)

// stepModel selects the scripted calls in order (requests with a format)
// and answers "Done." otherwise.
type stepModel struct {
	mu    sync.Mutex
	calls []string
}

func (s *stepModel) Chat(ctx context.Context, req ollama.ChatRequest, onChunk func(string) error) (ollama.ChatResponse, error) {
	s.mu.Lock()
	reply := "Done."
	if req.Format != nil && len(s.calls) > 0 {
		reply, s.calls = s.calls[0], s.calls[1:]
	}
	s.mu.Unlock()
	if err := onChunk(reply); err != nil {
		return ollama.ChatResponse{Content: reply}, err
	}
	return ollama.ChatResponse{Content: reply, Done: true}, nil
}
func (s *stepModel) Embed(context.Context, string, []string) ([][]float32, error) {
	return nil, ollama.ErrUnavailable
}
func (s *stepModel) Ping(context.Context) error               { return nil }
func (s *stepModel) Version(context.Context) (string, error)  { return "steps", nil }
func (s *stepModel) Models(context.Context) ([]string, error) { return []string{"steps"}, nil }

// A turn of several steps shows each: its number, its call, its outcome,
// then the model's end of the turn and its answer.
func TestChatShowsSteps(t *testing.T) {
	m := &stepModel{calls: []string{
		`{"function":"read-file","arguments":{"space":"documents","path":"hello.txt"}}`,
		`{"function":"read-file","arguments":{"space":"documents","path":"notes/todo.txt"}}`,
		`{"function":"none","arguments":{}}`,
	}}
	r := newRigWith(t, "none", nil, func(_ *pipeline.Registry, o *engine.Options) {
		o.Local, o.Client, o.LocalName = ollamamodel.New(m), ollamamodel.New(m), "steps"
	})
	r.start(Options{})
	mark := r.expect(0, "mode: model steps")
	r.say("read hello.txt then my todo list")
	mark = r.expect(mark, "[model steps] tool: read-file {\"space\":\"documents\",\"path\":\"hello.txt\"}")
	mark = r.expect(mark, "ok: read-file")
	mark = r.expect(mark, "step 2/5:")
	mark = r.expect(mark, "[model steps] tool: read-file {\"space\":\"documents\",\"path\":\"notes/todo.txt\"}")
	mark = r.expect(mark, "ok: read-file")
	mark = r.expect(mark, "step 3/5:")
	mark = r.expect(mark, "[model steps] no further call needed; the model answers:")
	mark = r.expect(mark, "Done.\n")
	r.expect(mark, "> ")
	r.stop()
	if strings.Contains(r.out.String(), "no tool fits") {
		t.Errorf("the model's end of a turn shown as no tool fitting:\n%s", r.out)
	}
	if got := r.auditTools()["read-file"]; len(got) != 2 {
		t.Errorf("audited read-file calls: %v", got)
	}
}
