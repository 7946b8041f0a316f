package report

import "testing"

// TreeEqual walks lists and objects itself and leaves numbers to its
// caller: the same trees are equal or not by the number rule alone.
func TestTreeEqualLeavesNumbersToTheCaller(t *testing.T) {
	exact := func(a, b any) (bool, bool) {
		x, ok := a.(int)
		if !ok {
			return false, false
		}
		y, ok := b.(int)
		return true, ok && x == y
	}
	loose := func(a, b any) (bool, bool) { // every int equals every int
		if _, ok := a.(int); !ok {
			return false, false
		}
		_, ok := b.(int)
		return true, ok
	}
	a := map[string]any{"k": []any{1, "s", nil, true, map[string]any{"n": 2}}}
	b := map[string]any{"k": []any{1, "s", nil, true, map[string]any{"n": 3}}}
	if !TreeEqual(a, a, exact) {
		t.Error("a tree is not equal to itself")
	}
	if TreeEqual(a, b, exact) {
		t.Error("2 and 3 deep in the trees compared equal under exact")
	}
	if !TreeEqual(a, b, loose) {
		t.Error("the trees differ only in a number, which loose calls equal, yet they compared unequal")
	}
	for _, c := range [][2]any{
		{[]any{1}, []any{1, 1}},
		{map[string]any{"a": 1}, map[string]any{"b": 1}},
		{"1", 1},
		{true, false},
		{nil, "x"},
		{[]any{}, map[string]any{}},
	} {
		if TreeEqual(c[0], c[1], loose) {
			t.Errorf("TreeEqual(%v, %v) = true", c[0], c[1])
		}
	}
}
