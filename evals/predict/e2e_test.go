//go:build e2e

package predict_test

// End-to-end test of the "ollama:MODEL" BFCL predictor against a real
// Ollama server running the tiny random-weight model of internal/tinymodel
// (scripts/e2e.sh exports OLLAMA_HOST, AIRS_E2E=1 and AIRS_E2E_MODEL;
// without them the test skips). With random weights accuracy means
// nothing: what must hold is that every call the predictor returns is
// valid for its tool's schema, and that a question without a call failed
// with the selector's clear InvalidCallError (or a deliberate "none").

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/bfcl"
	"github.com/airs-dev/airs/evals/predict"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/internal/ollama"
	"github.com/airs-dev/airs/model/ollamamodel"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// e2eServer returns a client of the e2e server and the tiny model's name,
// or skips when no server was started for the tests.
func e2eServer(t *testing.T) (*ollama.HTTP, string) {
	t.Helper()
	host := os.Getenv("OLLAMA_HOST")
	if os.Getenv("AIRS_E2E") == "" || host == "" {
		t.Skip("e2e: AIRS_E2E/OLLAMA_HOST are not set; run `bash scripts/e2e.sh ./evals/predict/` (make e2e), which starts Ollama with the tiny model")
	}
	model := os.Getenv("AIRS_E2E_MODEL")
	if model == "" {
		model = "airs-tiny"
	}
	c, err := ollama.New(ollama.Config{Host: host})
	if err != nil {
		t.Fatal(err)
	}
	return c, model
}

// e2eNumPredict caps generation: the tiny model costs tens of ms per
// grammar-constrained token.
const e2eNumPredict = 96

// cappedClient caps every chat's token budget and context (the server's
// default 2048, so the model is not reloaded) and keeps the replies.
type cappedClient struct {
	ollama.Client
	mu      sync.Mutex
	replies []ollama.ChatResponse
}

func (c *cappedClient) Chat(ctx context.Context, req ollama.ChatRequest, on func(string) error) (ollama.ChatResponse, error) {
	if req.Options.NumPredict <= 0 || req.Options.NumPredict > e2eNumPredict {
		req.Options.NumPredict = e2eNumPredict
	}
	req.Options.NumCtx = 2048
	r, err := c.Client.Chat(ctx, req, on)
	c.mu.Lock()
	c.replies = append(c.replies, r)
	c.mu.Unlock()
	return r, err
}

// asked is one question the predictor answered, as the runner gave it.
type asked struct {
	q     bfcl.Question
	tools []bfcl.ToolSchemaJSON
	calls []bfcl.Call
	err   error
}

// recordingPredictor wraps the real predictor and keeps what it answered.
type recordingPredictor struct {
	bfcl.Predictor
	mu  sync.Mutex
	log []asked
}

func (p *recordingPredictor) Predict(ctx context.Context, q bfcl.Question, tools []bfcl.ToolSchemaJSON) ([]bfcl.Call, error) {
	calls, err := p.Predictor.Predict(ctx, q, tools)
	p.mu.Lock()
	p.log = append(p.log, asked{q: q, tools: tools, calls: calls, err: err})
	p.mu.Unlock()
	return calls, err
}

func TestOllamaPredictorBFCL(t *testing.T) {
	srv, model := e2eServer(t)
	// a deadline, so that a server that stops answering fails the test
	// in minutes, not at go test's timeout
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	client := &cappedClient{Client: srv}
	inner, err := predict.New("ollama:"+model, predict.Options{Model: ollamamodel.New(client)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := inner.(*predict.Model); !ok {
		t.Fatalf("ollama:%s built a %T, not the model predictor", model, inner)
	}
	p := &recordingPredictor{Predictor: inner}
	start := time.Now()
	res, err := bfcl.Run(ctx, bfcl.Options{
		DataDir:    "../bfcl/testdata",
		Categories: []string{"simple_python", "multiple"},
		Predictor:  p,
		Limit:      3,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("bfcl.Run over %d questions in %v, %d chats", len(p.log), time.Since(start).Round(time.Millisecond), len(client.replies))
	if len(res) != 2 {
		t.Fatalf("%d category results, want 2 (simple_python, multiple)", len(res))
	}
	calls := 0
	for _, r := range res {
		t.Logf("%s: n=%d calls=%d valid=%d predict_errors=%d function_acc=%.2f ast_acc=%.2f (MEANINGLESS: random weights) errors=%v",
			r.Category, r.N, r.Calls, r.ValidCalls, r.PredictErrors, r.FunctionAcc, r.ASTAcc, r.ErrorTypes)
		if r.N != 3 {
			t.Errorf("%s: %d questions scored, want 3", r.Category, r.N)
		}
		if r.ValidCalls != r.Calls {
			t.Errorf("%s: %d of %d produced calls are invalid for their schema; failures: %+v", r.Category, r.Calls-r.ValidCalls, r.Calls, r.Failures)
		}
		if r.PredictErrors != 0 || len(r.SchemaErrors) != 0 {
			t.Errorf("%s: %d predictor errors, schema errors %v", r.Category, r.PredictErrors, r.SchemaErrors)
		}
		calls += r.Calls
	}
	if len(p.log) != 6 {
		t.Fatalf("the predictor was asked %d questions, want 6", len(p.log))
	}
	for _, a := range p.log {
		if a.err != nil {
			t.Errorf("question %s: predictor error: %v", a.q.ID, a.err)
		}
		t.Logf("question %s → %d call(s) %+v", a.q.ID, len(a.calls), a.calls)
	}
	// The model was really asked, and answered within the cap.
	if len(client.replies) < len(p.log) {
		t.Fatalf("%d chats for %d questions: the model was not asked", len(client.replies), len(p.log))
	}
	for i, r := range client.replies {
		if r.EvalCount > e2eNumPredict {
			t.Errorf("chat %d generated %d tokens over the cap %d", i, r.EvalCount, e2eNumPredict)
		}
		t.Logf("chat %d: %d tokens, %s, %v: %.120q", i, r.EvalCount, r.DoneReason, r.TotalDuration.Round(time.Millisecond), r.Content)
	}

	// A question that produced no call: the same selection, asked directly,
	// must say why — the clear InvalidCallError (the random model left the
	// grammar or ran out of tokens twice) or a valid "none" — never return
	// an invalid call.
	for _, a := range p.log {
		if len(a.calls) > 0 {
			continue
		}
		sel := questionSelector(t, ctx, a.tools, client, model)
		s, err := sel.Select(ctx, "bfcl", a.q.Text())
		var inv *selector.InvalidCallError
		switch {
		case errors.As(err, &inv):
			if inv.Reason == "" {
				t.Errorf("question %s: InvalidCallError without a reason", a.q.ID)
			}
			t.Logf("question %s: no call because %v (raw %.80q)", a.q.ID, inv, inv.Raw)
		case err != nil:
			t.Errorf("question %s: unclear error %T: %v", a.q.ID, err, err)
		case s.Mode != selector.ModeModel:
			t.Errorf("question %s: selection in mode %s, not the model: %s", a.q.ID, s.Mode, s.Notice)
		case s.Function != grammar.NoneTool:
			// Deterministic (temperature 0, fixed seed) but a valid call
			// now where the predictor returned none would be a bug.
			t.Errorf("question %s: direct selection called %s(%s) but the predictor returned no call", a.q.ID, s.Function, s.Arguments)
		default:
			t.Logf("question %s: the model answered none", a.q.ID)
		}
		break // one direct check is enough: each costs up to two generations
	}
	if calls == 0 {
		t.Logf("the tiny model produced no call at all (random weights); nothing invalid was returned")
	}
}

// questionSelector is the predictor's selector for one question, built
// from the package's exported parts (FormatFor, Validator) as Model does.
func questionSelector(t *testing.T, ctx context.Context, tools []bfcl.ToolSchemaJSON, c ollama.Client, model string) *selector.Selector {
	t.Helper()
	var cat fixedCatalog
	seen := map[string]bool{}
	for _, tl := range tools {
		if seen[tl.Name] {
			continue
		}
		seen[tl.Name] = true
		cat = append(cat, selector.Entry{Provider: "bfcl", Tool: pipeline.Tool{
			Name: tl.Name, Version: "1", Description: tl.Description, Parameters: tl.Parameters,
			Trust: pipeline.TrustLevel(2), Idempotent: true,
		}})
	}
	ix, err := embeddings.Open(ctx, embeddings.NewLexical(embeddings.LexicalOptions{}), embeddings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Sync(ctx, selector.Docs(cat)); err != nil {
		t.Fatal(err)
	}
	return selector.New(selector.Parts{
		Catalog:  cat,
		Index:    ix,
		Validate: predict.Validator(),
		Model:    ollamamodel.New(c),
		Config:   selector.Config{Model: model, TopK: len(cat), NumPredict: e2eNumPredict, NumCtx: 2048},
	})
}

type fixedCatalog []selector.Entry

func (c fixedCatalog) Callable(string) []selector.Entry { return c }
