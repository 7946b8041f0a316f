package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/turns"
)

// TestCompareOfLongTextsIsCharged: a compare of texts over heavyInput is
// heavy work, its CPU reported to the charge of the request that asked
// (turns.WithCharge, as `airs serve` gives a call); a compare of short
// texts is light, and charges nothing.
func TestCompareOfLongTextsIsCharged(t *testing.T) {
	var lines strings.Builder
	for i := 0; lines.Len() < heavyInput; i++ {
		lines.WriteString("line ")
		lines.WriteByte(byte('a' + i%3))
		lines.WriteByte('\n')
	}
	long := lines.String()
	for _, c := range []struct {
		a, b    string
		charged bool
	}{{long, long + "one more\n", true}, {"a\nb\n", "a\nc\n", false}} {
		var charged []time.Duration
		ctx := turns.WithCharge(context.Background(), func(cpu time.Duration) { charged = append(charged, cpu) })
		p, _ := json.Marshal(map[string]string{"a": c.a, "b": c.b})
		if _, err := Compare().Invoke(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
		if c.charged && (len(charged) != 1 || charged[0] <= 0) {
			t.Errorf("a compare of %d bytes charged %v, want one charge of its CPU", len(c.a)+len(c.b), charged)
		}
		if !c.charged && len(charged) != 0 {
			t.Errorf("a compare of %d bytes charged %v, want nothing", len(c.a)+len(c.b), charged)
		}
	}
}
