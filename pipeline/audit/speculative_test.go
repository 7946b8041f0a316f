package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The speculation marks are written by the hand-made encoder exactly as
// encoding/json writes them (omitted when unset), read back, and
// Speculations tells used speculative calls from wasted ones.
func TestRecordSpeculationFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	used, wasted, hit, plain := rec(1), rec(2), rec(3), rec(4)
	used.CallID, used.Speculative = "spec-1", true
	wasted.CallID, wasted.Speculative = "spec-2", true
	hit.SpeculativeHit, hit.SpeculationOf = true, "spec-1"
	for _, r := range []*Record{used, wasted, hit, plain} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	got, err := Tail(path, 4)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	for i, line := range lines {
		want, _ := json.Marshal(got[i])
		if !bytes.Equal(line, want) {
			t.Errorf("line %d\n got %s\nwant %s", i+1, line, want)
		}
	}
	if !got[0].Speculative || got[2].SpeculationOf != "spec-1" || !got[2].SpeculativeHit || got[3].Speculative || got[3].SpeculativeHit {
		t.Fatalf("round trip: %+v", got)
	}
	if bytes.Contains(lines[3], []byte("specula")) {
		t.Errorf("a plain record carries a speculation mark: %s", lines[3])
	}
	u, w := Speculations(got)
	if !slices.Equal(u, []string{"spec-1"}) || !slices.Equal(w, []string{"spec-2"}) {
		t.Fatalf("Speculations: used %v wasted %v", u, w)
	}
}
