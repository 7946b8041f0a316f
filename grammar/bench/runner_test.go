package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/airs-dev/airs/grammar"
)

// byteVocab: the 256 single bytes, a few multi-byte tokens, one EOS.
func byteVocab() *grammar.Vocab {
	v := &grammar.Vocab{Name: "bytes"}
	for b := range 256 {
		v.Tokens = append(v.Tokens, []byte{byte(b)})
	}
	for _, s := range []string{`{"`, `":`, `",`, `"}`, "name", "true", "null", "12"} {
		v.Tokens = append(v.Tokens, []byte(s))
	}
	v.Tokens = append(v.Tokens, []byte("<eos>"))
	v.Special = make([]bool, len(v.Tokens))
	v.Special[len(v.Tokens)-1] = true
	v.EOS = []int{len(v.Tokens) - 1}
	v.Size = len(v.Tokens) + 3
	return v
}

func record(t *testing.T, id, schema string, tests ...any) *Record {
	t.Helper()
	var ts []map[string]any
	for i := 0; i+1 < len(tests); i += 2 {
		ts = append(ts, map[string]any{"valid": tests[i], "data": json.RawMessage(tests[i+1].(string))})
	}
	line, err := json.Marshal(map[string]any{"id": id, "schema": json.RawMessage(schema), "tests": ts})
	if err != nil {
		t.Fatal(err)
	}
	return &Record{ID: id, File: "t.jsonl", line: line}
}

func TestRunnerStatuses(t *testing.T) {
	rn := NewRunner(byteVocab(), grammar.Options{})
	cases := []struct {
		rec      *Record
		status   string
		accepted int
		rejected int
	}{
		{record(t, "ok", `{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer","minimum":10}},"required":["name"]}`,
			true, `{"name":"x","n":12}`, false, `{"n":12}`, false, `{"name":"x","n":1}`), StatusOK, 1, 2},
		{record(t, "prefix", `{"type":"integer","minimum":10}`, false, `1`, true, `12`), StatusOK, 1, 1},
		{record(t, "bad-json-schema", `{"type":"nonsense-type"}`), StatusCompileError, 0, 0},
	}
	for _, c := range cases {
		r := rn.Run(c.rec)
		if r.Status != c.status || r.ValidAccepted != c.accepted || r.InvalidRejected != c.rejected {
			t.Errorf("%s: %+v", c.rec.ID, r)
		}
		if r.Status == StatusOK && (r.Masks == 0 || r.Masks > r.Tokens+len(mustParse(t, c.rec).Tests) || len(r.maskUS) != r.Masks) {
			t.Errorf("%s: %d masks for %d tokens", c.rec.ID, r.Masks, r.Tokens)
		}
	}
	// "1" under minimum 10 is a prefix of a valid instance: rejected at the end.
	r := rn.Run(record(t, "prefix2", `{"type":"integer","minimum":10}`, false, `1`))
	if r.InvalidRejected != 1 || r.InvalidRejectedAtToken != 0 {
		t.Errorf("prefix: %+v", r)
	}
}

// TestBenchEndToEnd runs Bench over the small JSONSchemaBench file with a
// real vocabulary: every schema reaches each in order, and the totals are
// the sum of the results.
func TestBenchEndToEnd(t *testing.T) {
	var ids []string
	var sum Totals
	var progress bytes.Buffer
	tot, err := Bench(BenchConfig{Data: []string{"testdata/mini.jsonl.gz"}, Vocab: "../testdata/qwen3.vocab.jsonl.gz", Limit: 5,
		Logf: func(f string, v ...any) { fmt.Fprintf(&progress, f, v...) }}, func(r *SchemaResult) error {
		ids = append(ids, r.ID)
		sum.Add(r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 5 || tot.Schemas != 5 || tot.Passing != sum.Passing || tot.Passing == 0 || tot.Masks != sum.Masks || !tot.Summary.Summary {
		t.Fatalf("ids %v, totals %+v, summed %+v", ids, tot.Summary, sum.Summary)
	}
	if !strings.Contains(progress.String(), "5 of 12 schemas") {
		t.Errorf("progress %q", progress.String())
	}
	var text bytes.Buffer
	WriteTextSummary(&text, tot)
	if want := fmt.Sprintf("schemas 5  compiled %d  passing %d", tot.Compiled, tot.Passing); !strings.HasPrefix(text.String(), want) {
		t.Errorf("summary %q, want prefix %q", text.String(), want)
	}
	// An error from each stops the run.
	stop := errors.New("stop")
	n := 0
	if _, err := Bench(BenchConfig{Data: []string{"testdata/mini.jsonl.gz"}, Vocab: "../testdata/qwen3.vocab.jsonl.gz"},
		func(*SchemaResult) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("each's error: %v after %d schemas", err, n)
	}
}

func TestBenchErrors(t *testing.T) {
	none := func(*SchemaResult) error { t.Fatal("no schema should run"); return nil }
	if _, err := Bench(BenchConfig{Data: []string{"testdata/mini.jsonl.gz"}, Vocab: "testdata/nonexistent.vocab.jsonl.gz"}, none); err == nil || !strings.Contains(err.Error(), "nonexistent") {
		t.Errorf("missing vocab: %v", err)
	}
	if _, err := Bench(BenchConfig{Vocab: "x"}, none); err == nil {
		t.Error("no data accepted")
	}
	t.Setenv("DATA_DIR", t.TempDir())
	if _, err := Bench(BenchConfig{Data: []string{"jsonschemabench"}, Vocab: "llama3"}, none); err == nil || !strings.Contains(err.Error(), "DATA_DIR") {
		t.Errorf("data not under DATA_DIR: %v", err)
	}
}

func mustParse(t *testing.T, r *Record) *Parsed {
	p, err := r.Parse()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
