package grammar

import (
	"math/rand/v2"
	"testing"
)

// At the nesting limit an object whose only keys left have values that
// need more nesting must close instead of taking a comma: the shape of a
// GOV.UK schema's recursive headers (an array of at least one object whose
// optional "headers" is that array again). Random sampling under a small
// MaxDepth reaches the limit in most draws; before valNeed (depth.go) it
// dead-ended after `"text":"…",`.
func TestDepthLimitKeysLive(t *testing.T) {
	schema := []byte(`{"$ref":"#/definitions/h","definitions":{"h":{"type":"array","minItems":1,"items":{"type":"object","required":["text","level","id"],"additionalProperties":false,
		"properties":{"headers":{"$ref":"#/definitions/h"},"id":{"type":"string"},"level":{"type":"integer"},"text":{"type":"string"}}}}}}`)
	val := newValidator(t, schema)
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	for _, depth := range []int{3, 4} {
		g, err := Compile(schema, Options{MaxDepth: depth, MaxStringBytes: 4, MaxContainerItems: 4})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(depth), 9))
		dead := 0
		for d := 0; d < 12; d++ {
			tm := g.NewTokenMatcher(ti)
			var out []byte
			for steps := 0; steps < 3000 && !tm.IsTerminated(); steps++ {
				tm.FillMask(bits)
				id := pickUniform(bits, rng)
				if id < 0 {
					if dead == 0 {
						t.Errorf("MaxDepth %d: dead end after %s", depth, out)
					}
					dead++
					break
				}
				if !tm.Accept(id) {
					t.Fatalf("allowed token refused after %s", out)
				}
				if !tm.IsTerminated() {
					out = append(out, ti.v.Tokens[id]...)
				}
			}
			if tm.IsTerminated() && !val.valid(out) {
				t.Errorf("MaxDepth %d: invalid output %s", depth, out)
			}
		}
		if dead > 0 {
			t.Errorf("MaxDepth %d: %d of 12 draws dead-ended", depth, dead)
		}
	}
}
