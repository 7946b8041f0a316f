package grammar

import (
	"path/filepath"
	"testing"
	"time"
)

func TestWalkCost(t *testing.T) {
	v, err := LoadVocab(filepath.Join(dataDir(), "tokenizers", "llama3.vocab.jsonl.gz"))
	if err != nil {
		t.Skip(err)
	}
	ti := NewTokenizerInfo(v)
	t.Log("trie nodes", ti.TrieNodes(), "maxLen", ti.maxLen, "eos", v.EOS)
	g, _ := Compile([]byte(`{"type":"string"}`), Options{})
	r := g.rules[0]
	// state after opening quote
	s := r.next[0*r.ncls+int32(r.cls['"'])]
	t0 := time.Now()
	sm := ti.computeStateMask(r, s)
	t.Log("walk", time.Since(t0), len(sm.accList), sm.accBits != nil, len(sm.unc))
	n := 0
	for _, tok := range v.Tokens {
		for i, c := range tok {
			if c == '"' && i < len(tok)-1 {
				n++
				break
			}
		}
	}
	t.Log("tokens with quote inside", n)
}
