package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// poolDifferential compiles schema and checks the grammar against the
// reference validator on n instances from draw (combinations of a small
// pool of values, so that both valid and invalid ones come up), returning
// how many the validator called valid and invalid.
func poolDifferential(t *testing.T, schema string, n int, draw func() string) (valid, invalid int) {
	t.Helper()
	g, err := Compile([]byte(schema), Options{})
	if err != nil {
		t.Fatalf("%s: %v", schema, err)
	}
	val := newValidator(t, []byte(schema))
	for range n {
		x := draw()
		want := val.valid([]byte(x))
		if got := g.Match([]byte(x)); got != want {
			t.Errorf("%s: %s: grammar %v, validator %v", schema, x, got, want)
		}
		if want {
			valid++
		} else {
			invalid++
		}
	}
	return valid, invalid
}

// arrayDraw draws arrays of fewer than below items from pool, written as
// the value of "k" when the schema is an object (a case about a property's
// value).
func arrayDraw(rng *rand.Rand, schema string, pool []string, below int) func() string {
	return func() string {
		items := make([]string, rng.IntN(below))
		for j := range items {
			items[j] = pool[rng.IntN(len(pool))]
		}
		x := "[" + strings.Join(items, ",") + "]"
		if strings.HasPrefix(schema, `{"type":"object"`) {
			return `{"k":` + x + `}`
		}
		return x
	}
}

// wantBoth fails the case when the draws were all valid or all invalid: a
// differential that never sees one side proves nothing about it.
func wantBoth(t *testing.T, schema string, valid, invalid int) {
	t.Helper()
	if valid == 0 || invalid == 0 {
		t.Errorf("%s: the generator drew %d valid and %d invalid instances: want both", schema, valid, invalid)
	}
}
