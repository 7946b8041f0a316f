package grammar

import (
	mbits "math/bits"
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
				results[w] = append(results[w], popcount(bits))
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

// TestToolCallLazyMasks: token matchers racing through the name of a tool
// not built yet (run with -race) build it once and compute the masks an
// eagerly built grammar gives, at every step.
func TestToolCallLazyMasks(t *testing.T) {
	v := testVocab(t)
	ti := NewTokenizerInfo(v)
	tools := []ToolSchema{
		{Name: "get_weather", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string","maxLength":20},"days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"],"additionalProperties":false}`)},
		{Name: "get_time", Parameters: []byte(`{"type":"object","properties":{"zone":{"enum":["UTC","CET"]}},"required":["zone"]}`)},
	}
	call := []byte(`{"function":"get_weather","arguments":{"city":"Oslo","days":3}}`)
	ids := newGreedyTokenizer(v).tokenize(call)
	counts := func(g *Grammar) ([]int, bool) {
		tm := g.NewTokenMatcher(ti)
		bits := make([]uint64, ti.MaskWords())
		var out []int
		for _, id := range ids {
			tm.FillMask(bits)
			out = append(out, popcount(bits))
			if bits[id>>6]&(1<<(id&63)) == 0 || !tm.Accept(id) {
				return out, false
			}
		}
		return out, tm.IsAccepting()
	}
	toolCache.Clear()
	eager, err := ToolCall(tools, ToolCallOptions{AllowNone: true, Eager: true})
	if err != nil {
		t.Fatal(err)
	}
	want, ok := counts(eager)
	if !ok {
		t.Fatal("eager grammar rejected the call")
	}
	toolCache.Clear()
	lazy, err := ToolCall(tools, ToolCallOptions{AllowNone: true})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([][]int, 4)
	oks := make([]bool, 4)
	for w := range 4 {
		wg.Go(func() { results[w], oks[w] = counts(lazy) })
	}
	wg.Wait()
	for w := range 4 {
		if !oks[w] {
			t.Fatalf("worker %d: the call was rejected", w)
		}
		for i := range want {
			if results[w][i] != want[i] {
				t.Fatalf("worker %d, step %d: %d tokens allowed, eager %d", w, i, results[w][i], want[i])
			}
		}
	}
	if lazy.subs[1].built.Load() {
		t.Error("get_time was built without being chosen")
	}
	toolCache.Clear()
}

func popcount(bits []uint64) int {
	n := 0
	for _, x := range bits {
		n += mbits.OnesCount64(x)
	}
	return n
}
