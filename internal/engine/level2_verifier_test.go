package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/provenance"
	"github.com/airs-dev/airs/selector"
)

type verdictModel struct {
	answer string
	err    error
	got    selector.ModelRequest
}

func (m *verdictModel) Generate(_ context.Context, req selector.ModelRequest, on func(string) error) error {
	m.got = req
	if m.err != nil {
		return m.err
	}
	return on(m.answer)
}

// The model is asked under the verdict schema with the purpose, the
// request and the provenance as data; its verdict comes back, and an
// answer outside the schema is an error (the pipeline then judges without
// a model).
func TestModelVerifier(t *testing.T) {
	m := &verdictModel{answer: `{"verdict":"misaligned","reason":"the user asked for a summary, not a deletion"}`}
	v := ModelVerifier{Model: m, Name: "tiny"}
	in := pipeline.VerifyInput{Caller: "researcher", Purpose: "read and summarize papers", Request: "summarize invoice.pdf",
		Tool: &pipeline.Tool{Name: "delete-file", Description: "Delete one file."}, Class: pipeline.ClassDestructive,
		Params: map[string]any{"path": "reports/q3.xlsx"},
		Labels: provenance.Args{"path": provenance.Of(provenance.Label{Kind: provenance.Space, Source: "documents/invoice.pdf"})}}
	got, err := v.Verify(context.Background(), in)
	if err != nil || got.Verdict != pipeline.VerdictMisaligned || !strings.Contains(got.Reason, "not a deletion") {
		t.Fatalf("verdict %+v %v", got, err)
	}
	if string(m.got.Format) != pipeline.VerdictSchema || m.got.Model != "tiny" {
		t.Errorf("format %s model %q", m.got.Format, m.got.Model)
	}
	user := m.got.Messages[len(m.got.Messages)-1].Content
	for _, want := range []string{"read and summarize papers", "summarize invoice.pdf", "space:documents/invoice.pdf (untrusted)", "reports/q3.xlsx"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if !json.Valid([]byte(pipeline.VerdictSchema)) {
		t.Error("VerdictSchema is not JSON")
	}
	for _, bad := range []string{`{"verdict":"maybe","reason":"x"}`, `not json`} {
		m.answer = bad
		if _, err := v.Verify(context.Background(), in); err == nil {
			t.Errorf("answer %s accepted", bad)
		}
	}
	m.err = errors.New("model down")
	if _, err := v.Verify(context.Background(), in); err == nil {
		t.Error("a failing model gave a verdict")
	}
}
