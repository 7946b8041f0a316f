package bench

import (
	"fmt"

	"github.com/airs-dev/airs/grammar"
)

// GreedyTokenizer splits bytes by greedy longest match over the byte strings
// of a vocabulary's non-special tokens; when two tokens have the same bytes
// the lowest id wins. It is not a model's BPE segmentation, but it is exactly
// what the XGrammar peer (shared/peers/xgrammar/vocab.mjs) does, so both
// engines walk the same token sequences.
type GreedyTokenizer struct {
	edges   map[uint64]int32 // node<<8 | byte -> child
	tokenAt []int32          // node -> token id or -1
}

// NewGreedyTokenizer builds the byte trie of v's regular tokens.
func NewGreedyTokenizer(v *grammar.Vocab) *GreedyTokenizer {
	t := &GreedyTokenizer{edges: make(map[uint64]int32, len(v.Tokens)*4), tokenAt: []int32{-1}}
	for id, b := range v.Tokens {
		if len(b) == 0 || (id < len(v.Special) && v.Special[id]) {
			continue
		}
		node := int32(0)
		for _, c := range b {
			key := uint64(node)<<8 | uint64(c)
			nx, ok := t.edges[key]
			if !ok {
				nx = int32(len(t.tokenAt))
				t.tokenAt = append(t.tokenAt, -1)
				t.edges[key] = nx
			}
			node = nx
		}
		if t.tokenAt[node] < 0 {
			t.tokenAt[node] = int32(id)
		}
	}
	return t
}

// Encode tokenizes p; it fails when some byte starts no token.
func (t *GreedyTokenizer) Encode(p []byte) ([]int32, error) {
	out := make([]int32, 0, len(p)/3+1)
	for i := 0; i < len(p); {
		node, best, bestLen := int32(0), int32(-1), 0
		for j := i; j < len(p); j++ {
			nx, ok := t.edges[uint64(node)<<8|uint64(p[j])]
			if !ok {
				break
			}
			node = nx
			if id := t.tokenAt[node]; id >= 0 {
				best, bestLen = id, j-i+1
			}
		}
		if best < 0 {
			return nil, fmt.Errorf("no token covers byte 0x%02x at %d", p[i], i)
		}
		out = append(out, best)
		i += bestLen
	}
	return out, nil
}
