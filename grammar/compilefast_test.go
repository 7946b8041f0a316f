package grammar

import (
	"reflect"
	"testing"
)

// The ASCII fast path of rawSeqs gives what the general path gives.
func TestASCIISeqs(t *testing.T) {
	for lo := rune(0); lo < 0x80; lo++ {
		for hi := lo; hi < 0x80; hi++ {
			var want [][][2]byte
			for _, rr := range (rset{{max(lo, 0x20), hi}}).minus(rset{{'"', '"'}, {'\\', '\\'}}) {
				if rr.lo <= rr.hi {
					want = utf8Seqs(rr.lo, rr.hi, want)
				}
			}
			if got := asciiSeqs(lo, hi); !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("%#x..%#x: %v, want %v", lo, hi, got, want)
			}
		}
	}
}

// literalsDFA accepts exactly its strings, shares prefixes, and is minimal.
func TestLiteralsDFA(t *testing.T) {
	ss := []string{"city", "cities", "days", "", "ünï", "c"}
	d := literalsDFA(ss)
	accepts := func(s string) bool {
		st := int32(0)
		for _, r := range s {
			if st = d.step(st, r); st < 0 {
				return false
			}
		}
		return d.st[st].final
	}
	for _, s := range ss {
		if !accepts(s) {
			t.Errorf("%q rejected", s)
		}
	}
	for _, s := range []string{"cit", "citys", "day", "ün", "cc", "x"} {
		if accepts(s) {
			t.Errorf("%q accepted", s)
		}
	}
	if m := d.minimize(); len(m.st) != len(d.st) {
		t.Errorf("not minimal: %d states, minimal %d", len(d.st), len(m.st))
	}
	if one := literalsDFA([]string{"abc"}); len(one.st) != 4 || !one.st[3].final {
		t.Errorf("a single literal is not a 4-state chain: %d states", len(one.st))
	}
}
