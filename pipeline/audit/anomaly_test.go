package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The anomaly fields and params_bytes: written by the hand-made encoder as
// encoding/json writes them (a score of 0 included: a scored call always
// carries its score; an unscored one neither field), read back by Tail,
// covered by the chain; and a log written before they existed still
// verifies and reads.
func TestRecordAnomalyFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	// An old log: records with none of the new fields.
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if err := l.Append(rec(i)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	old, _ := os.ReadFile(path)
	if bytes.Contains(old, []byte("anomaly")) || bytes.Contains(old, []byte("params_bytes")) {
		t.Fatalf("unscored records name anomaly fields: %s", old)
	}
	l, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	scores := []float64{0.97, 0, 0.001, 1, 0.5}
	for i, s := range scores {
		r := rec(3 + i)
		r.ParamsBytes = 100 + i
		r.AnomalyScore, r.AnomalyModel = new(s), "0123456789ab"
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Append(rec(99)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	got, err := Tail(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range scores {
		r := got[2+i]
		if r.AnomalyScore == nil || *r.AnomalyScore != s || r.AnomalyModel != "0123456789ab" || r.ParamsBytes != 100+i {
			t.Fatalf("record %d: %+v", 3+i, r)
		}
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		want, _ := json.Marshal(got[i])
		if !bytes.Equal(line, want) {
			t.Errorf("line %d\n got %s\nwant %s", i+1, line, want)
		}
	}
	if rep, err := Verify(path); err != nil || !rep.OK() || rep.Records != 8 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// Lowering a score after the fact is caught.
	os.WriteFile(path, bytes.Replace(data, []byte(`"anomaly_score":0.97`), []byte(`"anomaly_score":0.07`), 1), 0o600)
	if rep, err := Verify(path); err != nil || rep.OK() {
		t.Fatalf("an edited score passed verify: %+v %v", rep, err)
	}
}
