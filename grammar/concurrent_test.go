package grammar

import (
	"sync"
	"testing"
)

// TestConcurrentMasks: matchers on one Grammar and TokenizerInfo in
// parallel (run with -race) compute the same masks.
func TestConcurrentMasks(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	g, err := Compile([]byte(`{"type":"object","properties":{"s":{"type":"string"},"d":{"type":"string","format":"date"}},"required":["s","d"]}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tok := newGreedyTokenizer(v)
	ids := tok.tokenize([]byte(`{"s":"a b c","d":"2024-05-06"}`))
	var wg sync.WaitGroup
	results := make([][]int, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			tm := g.NewTokenMatcher(ti)
			bits := make([]uint64, ti.MaskWords())
			for _, id := range ids {
				tm.FillMask(bits)
				n := 0
				for _, x := range bits {
					for ; x != 0; x &= x - 1 {
						n++
					}
				}
				results[w] = append(results[w], n)
				if !tm.Accept(id) {
					t.Errorf("worker %d: token rejected", w)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	for w := 1; w < 4; w++ {
		for i := range results[0] {
			if i >= len(results[w]) || results[w][i] != results[0][i] {
				t.Fatalf("worker %d differs at step %d", w, i)
			}
		}
	}
}
