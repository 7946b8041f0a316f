package complete

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/server/compat"
)

// airs answers a request on AIRS's own tools: the last user message is one
// turn of the engine (selection, the pipeline's seven stages with the
// guard and the audit log, the answer), as POST /v1/chat runs it. The
// client's tools are not offered; what ran and what waits is said in the
// answer.
func (b *Backend) airs(ctx context.Context, caller string, req *compat.Request, onText func(compat.Mode, string) error) (*compat.Reply, error) {
	text := req.LastUser()
	if text == "" {
		return nil, &compat.RequestError{Param: "messages", Message: "the model " + b.o.AIRSModel + " answers the last user message: send one"}
	}
	rep := &compat.Reply{Mode: compat.ModeAIRS, Model: b.o.AIRSModel}
	var content strings.Builder
	var notes, results []string
	say := func(s string) error {
		content.WriteString(s)
		if onText != nil {
			return onText(compat.ModeAIRS, s)
		}
		return nil
	}
	err := b.o.AIRS.Chat(ctx, caller, text, func(event string, data any) error {
		m := asMap(data)
		switch event {
		case "token":
			return say(str(m["text"]))
		case "confirm":
			return say(fmt.Sprintf("%s waits for your confirmation: %s\n", str(m["tool"]), str(m["message"])))
		case "result":
			if held := heldSentence(m); held != "" {
				return say(held + "\n")
			}
			if m["error"] != nil {
				return say(fmt.Sprintf("The call failed (%s): %s\n", str(m["error"]), str(m["message"])))
			}
			if out, err := json.Marshal(m["output"]); err == nil && m["output"] != nil {
				results = append(results, str(m["tool"])+" returned: "+string(out))
			}
		case "note":
			notes = append(notes, str(m["text"]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Content = content.String()
	switch {
	case rep.Content == "" && len(results) > 0:
		// No model wrote an answer (no-LLM mode): the results are it.
		rep.Content = strings.Join(results, "\n")
	case rep.Content == "" && len(notes) > 0:
		rep.Content = strings.Join(notes, "\n")
	}
	rep.Notice = strings.Join(notes, "; ")
	return rep, nil
}

// heldSentence says what a held call waits for and whom ("" when the
// result is not a held call).
func heldSentence(m map[string]any) string {
	c := asMap(m["confirmation"])
	if c == nil {
		return ""
	}
	s := fmt.Sprintf("The call of %s is held: it waits for a person to approve it for %s (review %s: POST %s, or deny it: POST %s)",
		str(c["tool"]), str(c["caller"]), str(c["id"]), str(c["approve"]), str(c["deny"]))
	if exp := str(c["expires_at"]); exp != "" {
		s += ", until " + exp
	}
	return s + "."
}

// asMap reads an event's data as a JSON object.
func asMap(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}
