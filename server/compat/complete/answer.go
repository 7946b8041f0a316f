package complete

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server/compat"
)

// answer writes the reply's content: free text, or JSON under the
// request's schema (generated under its grammar and validated in full).
func (b *Backend) answer(ctx context.Context, req *compat.Request, rep *compat.Reply, onText func(compat.Mode, string) error) (*compat.Reply, error) {
	if b.Mode() == compat.ModeNoLLM {
		rep.Mode = compat.ModeNoLLM
		return b.answerNoLLM(req, rep)
	}
	rep.Mode = compat.ModeModel
	maxTokens := b.maxTokens(req)
	msgs := conversation(req, false)
	if !req.JSON {
		var stream func(string) error
		if onText != nil {
			stream = func(c string) error { return onText(compat.ModeModel, c) }
		}
		text, err := b.generate(ctx, nil, nil, msgs, maxTokens, stream)
		if err != nil {
			return nil, modelDown(b.o.ModelName, err)
		}
		rep.Content = text
		return rep, nil
	}
	schema := req.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	g, err := grammar.CompileCached(schema, grammar.Options{Lenient: true})
	if err != nil {
		return nil, &compat.RequestError{Param: "response_format", Message: "the response schema cannot be turned into a grammar: " + err.Error()}
	}
	format, _, err := selector.OllamaFormat(schema)
	if err != nil {
		return nil, &compat.RequestError{Param: "response_format", Message: "the response schema cannot be exported: " + err.Error()}
	}
	msgs = append([]selector.Message{{Role: "system", Content: "Answer with JSON only, following this JSON Schema: " + string(compactRaw(schema))}}, msgs...)
	var last string
	for attempt := 0; attempt < 2; attempt++ {
		raw, err := b.generate(ctx, g, format, msgs, maxTokens, nil)
		if err != nil {
			return nil, modelDown(b.o.ModelName, err)
		}
		if verr := b.validateAgainst(schema, json.RawMessage(raw)); verr != nil {
			last = verr.Error()
			msgs = append(msgs, selector.Message{Role: "assistant", Content: raw},
				selector.Message{Role: "user", Content: "That answer is invalid: " + last + "\nAnswer again, JSON only."})
			continue
		}
		rep.Content = string(compactRaw(json.RawMessage(raw)))
		return rep, nil
	}
	return nil, fmt.Errorf("the model's answer does not follow the response schema after one repair attempt: %s", last)
}

// maxTokens bounds a generation: the request's max_tokens (num_predict),
// else Options.MaxTokens. A call cut short by it fails the grammar's
// check and is never returned.
func (b *Backend) maxTokens(req *compat.Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return b.o.MaxTokens
}

// modelDown says a model that does not answer is unavailable (503).
func modelDown(model string, err error) error {
	if errors.Is(err, selector.ErrModelUnavailable) {
		return &pipeline.ProviderUnavailable{Provider: "model " + model, Tool: "the answer", Reason: err.Error()}
	}
	return err
}

// answerNoLLM answers without a model: JSON under the schema from the
// request's words, a tool's results passed on, or a sentence that says
// what AIRS does without a model.
func (b *Backend) answerNoLLM(req *compat.Request, rep *compat.Reply) (*compat.Reply, error) {
	text := req.LastUser()
	if req.JSON {
		schema := req.Schema
		if len(schema) == 0 {
			rep.Content = "{}"
			return rep, nil
		}
		args, err := selector.ExtractArguments(schema, text, selector.Hints{})
		if err != nil {
			return nil, &compat.RequestError{Param: "response_format", Message: "without a model, AIRS fills a response schema from the request's words, and this one it cannot: " + err.Error()}
		}
		raw, _ := json.Marshal(args)
		if err := b.validateAgainst(schema, raw); err != nil {
			return nil, &compat.RequestError{Param: "response_format", Message: "without a model, the request's words do not fill the response schema (" + err.Error() + "): say the values, or configure a model"}
		}
		rep.Content = string(raw)
		rep.Notice = selector.NoLLMNotice
		return rep, nil
	}
	if afterResult(req) {
		// The results are the answer: passed on as they are, named.
		first := len(req.Messages)
		for first > 0 && req.Messages[first-1].Role == "tool" {
			first--
		}
		var lines []string
		for _, m := range req.Messages[first:] {
			lines = append(lines, cmpOr(m.Name, "the tool")+" returned: "+m.Content)
		}
		rep.Content = strings.Join(lines, "\n")
		rep.Notice = selector.NoLLMNotice
		return rep, nil
	}
	rep.Notice = cmpOr(rep.Notice, selector.NoLLMNotice)
	if len(req.Tools) > 0 && req.Choice.Mode != compat.ChoiceNone {
		rep.Content = "No tool among the " + fmt.Sprint(len(req.Tools)) + " offered fits this request. AIRS runs without a language model here, so it answers with tool calls only: configure a model (ollama.model in airs.yaml) for written answers."
	} else {
		rep.Content = "AIRS runs without a language model here, so it answers with tool calls only: send tools with the request, or configure a model (ollama.model in airs.yaml) for written answers."
	}
	return rep, nil
}
