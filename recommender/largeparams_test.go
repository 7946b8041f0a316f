package recommender

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLargeArgumentsAreNotDecoded: a call with arguments past
// maxObservedParams is keyed by their hash and its arguments are not
// decoded (the recommender's lock is shared by every caller's calls, and a
// caller's half-megabyte text must not hold the others up); equal
// arguments still give equal keys, and small ones keep the canonical key.
func TestLargeArgumentsAreNotDecoded(t *testing.T) {
	big, _ := json.Marshal(map[string]string{"a": strings.Repeat("lorem ipsum ", 40_000), "b": strings.Repeat("dolor sit ", 40_000)})
	if len(big) <= maxObservedParams {
		t.Fatal("the test's arguments must be large")
	}
	k1, k2 := callKey("compare", big), callKey("compare", append([]byte(nil), big...))
	if k1 != k2 || !strings.Contains(k1, "sha256:") {
		t.Fatalf("keys %q… and %q…: want one hash key", k1[:40], k2[:40])
	}
	other := append([]byte(nil), big...)
	other[10] = 'X'
	if callKey("compare", other) == k1 {
		t.Fatal("different arguments, same key")
	}
	if callKey("calculator", json.RawMessage(`{ "expression" : "1+1" }`)) != callKey("calculator", json.RawMessage(`{"expression":"1+1"}`)) {
		t.Fatal("small arguments: the key must not depend on spacing")
	}
	now := time.Now()
	if mc := newMadeCall("compare", big, now, now); mc.args != nil {
		t.Fatal("large arguments were decoded")
	}
	if mc := newMadeCall("calculator", json.RawMessage(`{"expression":"1+1"}`), now, now); mc.args["expression"] != "1+1" {
		t.Fatalf("small arguments: %v, want them decoded", mc.args)
	}
}
