package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// ambiguousBackend answers every selection and plan with several equally
// good files, wrapped as the engine wraps its errors.
type ambiguousBackend struct{ *testBackend }

// choice and ambiguous stand for the selector's (selector.AmbiguousError):
// server knows such an error only by its Ambiguity method.
type choice struct {
	Space string `json:"space"`
	Path  string `json:"path"`
}

type ambiguous struct {
	Phrase  string
	Choices []choice
}

func (e *ambiguous) Error() string            { return e.Phrase + " names several files" }
func (e *ambiguous) Ambiguity() (string, any) { return e.Phrase, e.Choices }

var twoQuotes = &ambiguous{Phrase: "the acme quote", Choices: []choice{
	{Space: "documents", Path: "quotes/acme-2024.pdf"}, {Space: "documents", Path: "quotes/acme-2025.pdf"}}}

func (b ambiguousBackend) Select(ctx context.Context, caller, text string) (any, error) {
	return nil, fmt.Errorf("select: %w", twoQuotes)
}
func (b ambiguousBackend) Plan(ctx context.Context, caller, text string) (any, error) {
	return nil, fmt.Errorf("plan: %w", twoQuotes)
}

// TestAmbiguousAnswersWithChoices: /v1/select and /v1/plan answer 422 with
// the candidates as a structured field, not only in the message.
func TestAmbiguousAnswersWithChoices(t *testing.T) {
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}), Policy: &pipeline.StaticPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	s := New(ambiguousBackend{&testBackend{m}}, Config{Tokens: []Token{{HashToken("tok"), "bob"}}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, l) }()
	defer func() { stop(); <-done }()
	for _, path := range []string{"/v1/select", "/v1/plan"} {
		req, _ := http.NewRequest("POST", "http://"+l.Addr().String()+path, strings.NewReader(`{"text":"extract the acme quote"}`))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Error   string   `json:"error"`
			Phrase  string   `json:"phrase"`
			Choices []choice `json:"choices"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: status %d, want 422", path, resp.StatusCode)
		}
		if body.Phrase != twoQuotes.Phrase || len(body.Choices) != 2 || body.Choices[1] != twoQuotes.Choices[1] {
			t.Errorf("%s: body %+v, want the phrase and both choices", path, body)
		}
	}
}
