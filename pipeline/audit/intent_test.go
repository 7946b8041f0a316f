package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// The intent gate's decision is in the record: written by the hand-made
// encoder exactly as encoding/json would write it (omitted when empty),
// read back by Tail, part of the hash chain (changing it breaks Verify).
func TestRecordIntentFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	plain := rec(1)
	decided := rec(2)
	decided.Error = ""
	decided.Intent, decided.Review, decided.Reviewer = "approved", "cf-1\"x", "cli:alice"
	// The decided record first: only a line with a successor is covered
	// by the chain (the last line's hash is what `airs audit verify`
	// prints, to be kept elsewhere).
	for _, r := range []*Record{decided, plain} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got, err := Tail(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got[1].Intent != "" || got[0].Intent != "approved" || got[0].Review != "cf-1\"x" || got[0].Reviewer != "cli:alice" {
		t.Fatalf("round trip: %+v", got)
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		want, _ := json.Marshal(got[i]) // the struct's order and omitempty
		if !bytes.Equal(line, want) {
			t.Errorf("line %d\n got %s\nwant %s", i+1, line, want)
		}
	}
	if bytes.Contains(lines[1], []byte(`"intent"`)) {
		t.Errorf("an undecided record names an intent: %s", lines[1])
	}
	if rep, err := Verify(path); err != nil || !rep.OK() {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// A denial rewritten as an approval is caught.
	os.WriteFile(path, bytes.Replace(data, []byte(`"intent":"approved"`), []byte(`"intent":"always"`), 1), 0o600)
	if rep, err := Verify(path); err != nil || rep.OK() {
		t.Fatalf("an edited decision passed verify: %+v %v", rep, err)
	}
}
