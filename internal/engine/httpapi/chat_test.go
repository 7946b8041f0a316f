package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/airs-dev/airs/selector"
)

// scriptedModel selects and answers for a turn: a request with a format
// (a selection under the grammar) gets the next of steps, in order,
// streamed in small chunks so the selector's stream check runs as with a
// server; a request without one (the final answer) gets "ANSWER".
type scriptedModel struct {
	mu    sync.Mutex
	steps []string
}

func (f *scriptedModel) Generate(ctx context.Context, req selector.ModelRequest, on func(string) error) error {
	f.mu.Lock()
	reply := "ANSWER"
	if req.Format != nil {
		if len(f.steps) == 0 {
			f.mu.Unlock()
			return fmt.Errorf("scriptedModel: no scripted step left")
		}
		reply, f.steps = f.steps[0], f.steps[1:]
	}
	f.mu.Unlock()
	for i := 0; i < len(reply); i += 4 {
		if err := on(reply[i:min(i+4, len(reply))]); err != nil {
			return err
		}
	}
	return nil
}

func call(tool, args string) string { return `{"function":"` + tool + `","arguments":` + args + `}` }

const noneCall = `{"function":"none","arguments":{}}`

// /v1/chat streams a "step" event before each step after the first.
func TestServedChatSteps(t *testing.T) {
	m := &scriptedModel{steps: []string{call("calculator", `{"expression":"1+1"}`), call("calculator", `{"expression":"2+2"}`), noneCall}}
	_, _, e := newServedEngineWith(t, servedOptions{model: m})
	var events []string
	err := New(e).Chat(context.Background(), "web", "add twice", func(ev string, data any) error {
		if ev == "step" {
			b, _ := json.Marshal(data)
			ev += string(b)
		}
		if ev != "token" {
			events = append(events, ev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `selection,running,result,step{"max_steps":5,"step":2},selection,running,result,step{"max_steps":5,"step":3},selection,note`
	if got := strings.Join(events, ","); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}
