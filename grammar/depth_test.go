package grammar

import "testing"

// TestNoDeadEndAtDepthLimit: whatever prefix the matcher accepts can still
// be continued or is complete — also at the nesting limit, where an object
// opened there must not accept a key whose value would need one more level.
func TestNoDeadEndAtDepthLimit(t *testing.T) {
	schema := `{"type":"object","properties":{"v":{}},"required":["v"]}`
	for _, maxDepth := range []int{3, 6} {
		g, err := Compile([]byte(schema), Options{MaxDepth: maxDepth})
		if err != nil {
			t.Fatal(err)
		}
		for _, unit := range []string{`{"a":`, `[`, `[{"a":`} {
			prefix := `{"v":`
			for k := 0; k < 2*maxDepth; k++ {
				m := g.NewMatcher()
				if _, ok := m.AdvanceBytes([]byte(prefix)); !ok {
					break // the limit refused to open one more level: fine
				}
				live := m.IsAccepting()
				for b := 0; b < 256 && !live; b++ {
					snap := m.Snapshot()
					live = m.Advance(byte(b))
					m.Restore(snap)
				}
				if !live {
					t.Fatalf("MaxDepth %d: dead end after %q", maxDepth, prefix)
				}
				prefix += unit
			}
		}
	}
}
