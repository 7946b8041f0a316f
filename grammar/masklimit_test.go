package grammar

import (
	"math/rand/v2"
	"testing"
)

// TestMaskNearLimit: near a string's length limit the mask agrees with
// Accept on every short token (and a sample of the rest), on random walks
// through strings whose automaton bounds them itself (slong: no check
// needed), bounds them beyond the limit, or not at all (the limit binds:
// inString and the matcher decide), with multi-byte code points, escapes
// and keys.
func TestMaskNearLimit(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	var probe []int
	for id, tok := range v.Tokens {
		if len(tok) <= 4 || id%13 == 0 {
			probe = append(probe, id)
		}
	}
	schemas := []string{
		`{"type":"string","pattern":"^[A-Z]{3}$","maxLength":3}`,
		`{"type":"string","pattern":"^[A-Z]{2,4}$","maxLength":3}`,
		`{"type":"string","minLength":3,"maxLength":3}`,
		`{"type":"string","pattern":"^[a-zé中]{1,5}$","maxLength":4}`,
		`{"type":"string","pattern":"^(ab|c){1,3}$","maxLength":5}`,
		`{"type":"string","pattern":"^(ab|c){1,3}$","maxLength":4}`,
		`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{2}-[0-9]{2}$","maxLength":5}},"required":["code"]}`,
		`{"type":"string","maxLength":2}`,
		`{"type":"array","items":{"type":"string","pattern":"^x*$","maxLength":3},"minItems":2}`,
		// binding limits over strings that need many code points to
		// finish (nearWalk: o44204's timestamp)
		`{"type":"string","minLength":10,"maxLength":10,"pattern":"[0-9]{10,10}"}`,
		`{"type":"string","maxLength":9,"pattern":"[a-zé中\\n]+x{5}"}`,
		`{"type":"object","properties":{"k":{"type":"string","maxLength":7,"pattern":"^[^a]*a{4}$"}},"required":["k"]}`,
	}
	// every case with the no-quote walk wherever a check is due, then
	// with it only where FillMask uses it
	defer func(m int) { nearWalkMin = m }(nearWalkMin)
	for _, m := range []int{0, nearWalkMin} {
		nearWalkMin = m
		nearLimitCases(t, ti, probe, schemas)
	}
}

func nearLimitCases(t *testing.T, ti *TokenizerInfo, probe []int, schemas []string) {
	v := ti.Vocab()
	bits := make([]uint64, ti.MaskWords())
	for si, s := range schemas {
		g, err := Compile([]byte(s), Options{})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		for walk := range 2 {
			rng := rand.New(rand.NewPCG(uint64(si), uint64(walk)))
			tm := g.NewTokenMatcher(ti)
			var out []byte
			for step := 0; step < 25 && !tm.IsTerminated(); step++ {
				tm.FillMask(bits)
				var allowed []int
				for _, id := range probe {
					in := bits[id/64]&(1<<(id%64)) != 0
					ok := tm.Accept(id)
					if ok {
						tm.Rollback(1)
					}
					if in != ok {
						t.Fatalf("%s after %q: token %q mask %v accept %v", s, out, v.Tokens[id], in, ok)
					}
					if ok {
						allowed = append(allowed, id)
					}
				}
				if len(allowed) == 0 {
					break // only EOS or tokens outside the probe
				}
				id := allowed[rng.IntN(len(allowed))]
				tm.Accept(id)
				out = append(out, v.Tokens[id]...)
			}
		}
	}
}
