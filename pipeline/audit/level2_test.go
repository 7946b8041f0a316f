package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Level 2's provenance and verdict are in the record, written by the
// hand-made encoder exactly as encoding/json would write them, read back,
// and covered by the chain.
func TestRecordLevel2Fields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r := rec(1)
	r.Provenance = map[string][]string{"path": {"space:documents/invoice.pdf (untrusted)"}, "body": {"user", "network:evil.example \"x\" (untrusted)"}}
	r.Level2 = "held: delete-file path came from the text of documents/invoice.pdf (flow policy untrusted-target)"
	for _, x := range []*Record{r, rec(2)} {
		if err := l.Append(x); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got, err := Tail(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Level2 != r.Level2 || len(got[0].Provenance["body"]) != 2 || got[1].Provenance != nil {
		t.Fatalf("round trip: %+v", got)
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		want, _ := json.Marshal(got[i])
		if !bytes.Equal(line, want) {
			t.Errorf("line %d\n got %s\nwant %s", i+1, line, want)
		}
	}
	os.WriteFile(path, bytes.Replace(data, []byte(`invoice.pdf (untrusted)"]`), []byte(`invoice.pdf"]`), 1), 0o600)
	if rep, err := Verify(path); err != nil || rep.OK() {
		t.Fatalf("an edited provenance passed verify: %+v %v", rep, err)
	}
}
