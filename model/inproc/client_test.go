package inproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

// scriptedBackend is fakeBackend whose logits favour, at generated token
// i, the token script[i] (by a margin greedy decoding always follows), and
// give the boosted ids a logit above everything (what a mask must drop).
type scriptedBackend struct {
	*fakeBackend
	script []int
	boost  []int
	step   int
}

func (s *scriptedBackend) Eval(tokens []int) ([]float32, error) {
	l, err := s.fakeBackend.Eval(tokens)
	if err != nil {
		return nil, err
	}
	if s.step < len(s.script) {
		l[s.script[s.step]] += 100
	}
	for _, id := range s.boost {
		l[id] += 1000
	}
	s.step++
	return l, nil
}

func (s *scriptedBackend) Reset() { s.fakeBackend.Reset(); s.step = 0 }

// scriptedClient is a Client over a vocabulary with a control token
// (<|im_start|>) and an end of turn (<|im_end|>) beside the fake's <eos>,
// scripted to say text and then end its turn.
func scriptedClient(t *testing.T, text string, boost ...string) (*Client, *scriptedBackend) {
	t.Helper()
	v := newFakeVocab()
	for _, sp := range []string{"<|im_start|>", "<|im_end|>"} {
		v.Tokens = append(v.Tokens, []byte(sp))
		v.Special = append(v.Special, true)
	}
	v.Size = len(v.Tokens)
	fb := &fakeBackend{v: v}
	sb := &scriptedBackend{fakeBackend: fb}
	ids, _ := fb.Tokenize(text, false)
	sb.script = append(ids, len(v.Tokens)-1) // <|im_end|>: an end of turn by its text
	for _, b := range boost {
		for id, tok := range v.Tokens {
			if string(tok) == b {
				sb.boost = append(sb.boost, id)
			}
		}
	}
	e, err := New(sb, v)
	if err != nil {
		t.Fatal(err)
	}
	return &Client{Engine: e, Name: "fake"}, sb
}

func ptr[T any](v T) *T { return &v }

// opts are a sampled request's options.
type opts struct {
	selector.Sampling
	NumPredict int
}

func greedy() opts { return opts{Sampling: selector.Sampling{Temperature: ptr(0.0)}} }

func seeded(seed int) opts { return opts{Sampling: selector.Sampling{Seed: ptr(seed)}} }

func hi(o opts) selector.ModelRequest {
	s := o.Sampling
	return selector.ModelRequest{Messages: []selector.Message{{Role: "user", Content: "hi"}}, NumPredict: o.NumPredict, Sample: &s}
}

func chat(t *testing.T, c *Client, o opts, format string) (reply, []string, error) {
	t.Helper()
	var chunks []string
	req := hi(o)
	if format != "" {
		req.Format = json.RawMessage(format)
	}
	resp, err := c.chat(context.Background(), req, func(s string) error {
		chunks = append(chunks, s)
		return nil
	})
	return resp, chunks, err
}

func TestClientFree(t *testing.T) {
	c, _ := scriptedClient(t, "Hello, wörld!")
	resp, chunks, err := chat(t, c, greedy(), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Hello, wörld!" || !resp.Done || resp.DoneReason != "stop" {
		t.Fatalf("%+v", resp)
	}
	if strings.Join(chunks, "") != resp.Content || resp.Chunks != len(chunks) {
		t.Fatalf("chunks %q do not make the content %q (Chunks %d)", chunks, resp.Content, resp.Chunks)
	}
	// ö is two byte tokens: no chunk may end between them.
	for _, ch := range chunks {
		if !utf8.ValidString(ch) {
			t.Fatalf("chunk %q is not valid UTF-8 (chunks %q)", ch, chunks)
		}
	}
	if resp.EvalCount != len("Hello, wörld!")+1 || resp.PromptEvalCount == 0 {
		t.Fatalf("counts: %d generated (want %d with the end of turn), %d prompt", resp.EvalCount, len("Hello, wörld!")+1, resp.PromptEvalCount)
	}

	o := greedy()
	o.NumPredict = 4
	resp, _, err = chat(t, c, o, "")
	if err != nil || resp.Content != "Hell" || resp.DoneReason != "length" {
		t.Fatalf("NumPredict 4: %q %q %v", resp.Content, resp.DoneReason, err)
	}

	o = greedy()
	o.Stop = []string{"wör"}
	resp, chunks, err = chat(t, c, o, "")
	if err != nil || resp.Content != "Hello, " || resp.DoneReason != "stop" || strings.Join(chunks, "") != "Hello, " {
		t.Fatalf("stop wör: %q %q %q %v", resp.Content, resp.DoneReason, chunks, err)
	}

	// The caller's error stops generation and is returned with what came.
	stop := errors.New("enough")
	n := 0
	resp, err = c.chat(context.Background(), hi(greedy()),
		func(string) error {
			if n++; n == 3 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || resp.Content != "Hel" {
		t.Fatalf("onChunk's error: %q, %v", resp.Content, err)
	}
}

// A control token that is not an end of turn is never drawn, whatever its
// logit; the fake's <eos> (a GGUF EOS id) ends the turn as <|im_end|> does.
func TestClientFreeMasksControlTokens(t *testing.T) {
	c, _ := scriptedClient(t, "ok", "<|im_start|>")
	for seed := 0; seed < 20; seed++ {
		o := seeded(seed)
		o.NumPredict = 40
		resp, _, err := chat(t, c, o, "")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(resp.Content, "<|im_start|>") {
			t.Fatalf("seed %d: a control token in the answer: %q", seed, resp.Content)
		}
	}
	c, _ = scriptedClient(t, "ok", "<eos>")
	resp, _, err := chat(t, c, greedy(), "")
	if err != nil || resp.Content != "" || resp.DoneReason != "stop" {
		t.Fatalf("an EOS first: %q %q %v", resp.Content, resp.DoneReason, err)
	}
}

func TestClientFormat(t *testing.T) {
	c, _ := scriptedClient(t, "no json here")
	schema := `{"type":"object","properties":{"city":{"type":"string","maxLength":8},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"],"additionalProperties":false}`
	g, err := grammar.Compile([]byte(schema), grammar.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for seed := 0; seed < 10; seed++ {
		o := seeded(seed)
		resp, chunks, err := chat(t, c, o, schema)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if resp.DoneReason != "stop" || strings.Join(chunks, "") != resp.Content {
			t.Fatalf("seed %d: %+v, chunks %q", seed, resp, chunks)
		}
		if !g.Match([]byte(resp.Content)) {
			t.Fatalf("seed %d: %q does not match the schema", seed, resp.Content)
		}
	}
	resp, _, err := chat(t, c, greedy(), `"json"`)
	var obj map[string]any
	if err != nil || json.Unmarshal([]byte(resp.Content), &obj) != nil {
		t.Fatalf(`format "json": %q, %v`, resp.Content, err)
	}
	if _, _, err := chat(t, c, greedy(), `"yaml"`); err == nil || !strings.Contains(err.Error(), `want a JSON Schema or "json"`) {
		t.Fatalf(`format "yaml": %v`, err)
	}
}

func TestClientRest(t *testing.T) {
	c, sb := scriptedClient(t, "x")
	if err := c.Generate(context.Background(), selector.ModelRequest{Model: "fake"}, nil); err != nil || sb.evals != 0 {
		t.Fatalf("a warm-up: %v (%d decodes)", err, sb.evals)
	}
	// Generate reports a reply cut at NumPredict.
	o := greedy()
	cut := false
	o.Truncated = &cut
	o.NumPredict = 1
	if err := c.Generate(context.Background(), hi(o), nil); err != nil || !cut {
		t.Fatalf("NumPredict 1: truncated %v, %v", cut, err)
	}
	o = greedy()
	o.Truncated = &cut
	if err := c.Generate(context.Background(), hi(o), nil); err != nil || cut {
		t.Fatalf("a whole reply: truncated %v, %v", cut, err)
	}
}

func TestStreamerInvalidUTF8(t *testing.T) {
	var chunks []string
	st := &streamer{onChunk: func(c string) error { chunks = append(chunks, c); return nil }}
	for _, p := range [][]byte{[]byte("a"), {0xc3}, {0xb6}, {0xb6}, []byte("b"), {0xe4, 0xb8}} {
		if _, err := st.add(p); err != nil {
			t.Fatal(err)
		}
	}
	st.flush()
	if got := st.text.String(); got != "aö\uFFFDb\uFFFD" || strings.Join(chunks, "") != got {
		t.Fatalf("text %q, chunks %q", got, chunks)
	}
}

// Chat answers and selections share one engine (serve's requests):
// they take turns on its one sequence, each with its own result.
func TestClientConcurrent(t *testing.T) {
	c, _ := scriptedClient(t, "Hello")
	m := &Model{Engine: c.Engine, Name: "fake"}
	format, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "maxLength": 4}}, "required": []string{"city"}})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			resp, _, err := chat(t, c, greedy(), "")
			if err == nil && resp.Content != "Hello" {
				err = fmt.Errorf("answer %q under concurrency", resp.Content)
			}
			errs <- err
		}()
		go func(seed int) {
			defer wg.Done()
			errs <- m.Generate(context.Background(), selector.ModelRequest{Messages: []selector.Message{{Role: "user", Content: "x"}}, Format: format, Seed: seed}, nil)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if m.Last() == nil {
		t.Fatal("no last result")
	}
}
