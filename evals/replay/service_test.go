package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/session"
)

// notRecording is a Service whose recording is off; it serves no turn.
type notRecording struct{ Service }

func (notRecording) SessionLog() *session.Recorder { return nil }
func (notRecording) Serve(context.Context, string, string, string, func(pipeline.Tool) bool) (*Served, error) {
	panic("Generate served a turn that nothing would record")
}

// Generate needs only its Service: one that records nothing is refused
// before any turn is served.
func TestGenerateRefusesAServiceThatRecordsNothing(t *testing.T) {
	_, err := Generate(context.Background(), notRecording{}, "u", []Request{{Text: "what is 1+1", Tool: "calculator"}})
	if err == nil || !strings.Contains(err.Error(), "recording.enabled is off") {
		t.Fatalf("got %v, want the recording-off error", err)
	}
}

// Replay makes no client of its own: a Config naming an Ollama embedder or
// a model without the client to serve it is refused, saying which.
func TestReplayNeedsTheClientsItsConfigNames(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Embedder: "ollama:nomic-embed-text"}, "Options.Embed"},
		{Config{Model: "qwen3:0.6b"}, "Options.Model"},
	} {
		if _, _, err := newSelector(context.Background(), tc.cfg, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error naming %s", tc.cfg, err, tc.want)
		}
	}
}
