package complete

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Output bounds: generation stops at the first byte that leaves the
// grammar, at the grammar's end, or past maxOutput bytes.
const maxOutput = 16 << 10

var (
	errComplete = errors.New("complete")
	errRunaway  = errors.New("runaway output")
)

// generate runs the model once. With g, every chunk is checked against the
// grammar as it arrives and generation stops when the grammar is complete
// (format is the grammar's export for Ollama); onChunk, when set, receives
// the text as it comes.
func (b *Backend) generate(ctx context.Context, g *grammar.Grammar, format json.RawMessage, msgs []selector.Message, maxTokens int, onChunk func(string) error) (string, error) {
	var check *grammar.WhitespaceChecker
	if g != nil {
		check = selector.NewOutputChecker(g)
	}
	var out strings.Builder
	model := b.o.Model
	if len(format) == 0 && b.o.TextModel != nil {
		model = b.o.TextModel
	}
	err := model.Generate(ctx, selector.ModelRequest{
		Model: b.o.ModelName, Messages: msgs, Format: format, Seed: 42, NumCtx: b.o.NumCtx, NumPredict: maxTokens,
	}, func(chunk string) error {
		out.WriteString(chunk)
		if out.Len() > maxOutput {
			return errRunaway
		}
		if check != nil {
			if _, err := check.Write([]byte(chunk)); err != nil {
				return err
			}
		}
		if onChunk != nil {
			if err := onChunk(chunk); err != nil {
				return err
			}
		}
		if check != nil && check.Complete() {
			return errComplete
		}
		return nil
	})
	var off *grammar.OffendingByteError
	switch {
	case err == nil, errors.Is(err, errComplete):
		return out.String(), nil
	case errors.As(err, &off), errors.Is(err, errRunaway), errors.Is(err, selector.ErrModelRepeatLimit):
		return out.String(), nil // the check rejects it; the repair attempt shows it
	case errors.Is(err, selector.ErrModelNotFound):
		return "", fmt.Errorf("the model server has no model %q (%w): pull or create it, or set ollama.model in airs.yaml", b.o.ModelName, err)
	case errors.Is(err, selector.ErrModelUnavailable):
		return "", err // the caller falls back to no-LLM mode, or says the model is down
	}
	return out.String(), fmt.Errorf("model %s: %w", b.o.ModelName, err)
}

// compiled is a JSON Schema compiled once (by its text) with the
// validator the pipeline uses (JSON Schema 2020-12).
func (b *Backend) compiled(schema json.RawMessage) (*jsonschema.Schema, error) {
	key := string(schema)
	if v, ok := b.schemas.Load(key); ok {
		return v.(*jsonschema.Schema), nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	const url = "mem:///tool.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, err
	}
	v, _ := b.schemas.LoadOrStore(key, s)
	return v.(*jsonschema.Schema), nil
}

// validate checks a call's arguments against its tool's schema in full
// (a selector.Validator).
func (b *Backend) validate(t pipeline.Tool, args json.RawMessage) error {
	return b.validateAgainst(t.Parameters, args)
}

func (b *Backend) validateAgainst(schema, doc json.RawMessage) error {
	s, err := b.compiled(schema)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	return s.Validate(v)
}

// compactRaw drops insignificant white space; the values are untouched.
func compactRaw(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
