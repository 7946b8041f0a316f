package embeddings

import (
	"math"
	"slices"
	"sort"
)

// BM25 is an Okapi BM25 index over analysed documents (Robertson & Zaragoza,
// "The Probabilistic Relevance Framework: BM25 and Beyond", 2009), with
// Lucene's non-negative idf. Term frequencies may be fractional: a field
// weight multiplies a term's count before saturation, which is the simple
// form of BM25F. It is immutable once built and safe for concurrent Search.
type BM25 struct {
	K1, B    float64
	terms    map[string]int32
	postings [][]posting
	idf      []float64
	docLen   []float64
	norm     []float64 // k1·(1 − b + b·len/avgLen) per document
	avgLen   float64
}

type posting struct {
	doc int32
	tf  float32
}

// WeightedTerms is one document for BM25: analysed terms and the weight each
// occurrence counts for (field weight).
type WeightedTerms struct {
	Terms   []string
	Weights []float32 // nil: every term counts 1
}

// NewBM25 builds an index over docs with parameters k1 and b (1.2 and 0.75
// are the usual defaults).
func NewBM25(docs []WeightedTerms, k1, b float64) *BM25 {
	ix := &BM25{K1: k1, B: b, terms: map[string]int32{}, docLen: make([]float64, len(docs))}
	total := 0.0
	for d, doc := range docs {
		tf := map[string]float32{}
		for i, t := range doc.Terms {
			w := float32(1)
			if doc.Weights != nil {
				w = doc.Weights[i]
			}
			tf[t] += w
			ix.docLen[d] += float64(w)
		}
		total += ix.docLen[d]
		keys := make([]string, 0, len(tf))
		for t := range tf {
			keys = append(keys, t)
		}
		sort.Strings(keys) // deterministic term ids
		for _, t := range keys {
			id, ok := ix.terms[t]
			if !ok {
				id = int32(len(ix.postings))
				ix.terms[t] = id
				ix.postings = append(ix.postings, nil)
			}
			ix.postings[id] = append(ix.postings[id], posting{int32(d), tf[t]})
		}
	}
	if len(docs) > 0 {
		ix.avgLen = total / float64(len(docs))
	}
	if ix.avgLen == 0 {
		ix.avgLen = 1
	}
	ix.norm = make([]float64, len(docs))
	for d, l := range ix.docLen {
		ix.norm[d] = k1 * (1 - b + b*l/ix.avgLen)
	}
	n := float64(len(docs))
	ix.idf = make([]float64, len(ix.postings))
	for i, p := range ix.postings {
		df := float64(len(p))
		ix.idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return ix
}

// Len is the number of documents.
func (ix *BM25) Len() int { return len(ix.docLen) }

// Scores adds the BM25 score of every document for the query terms into
// scores (len = Len()); documents with allowed[d] == false are skipped
// (allowed == nil allows all). A term repeated in the query counts once.
func (ix *BM25) Scores(query []string, allowed []bool, scores []float64) {
	seen := make([]int32, 0, len(query))
	for _, t := range query {
		id, ok := ix.terms[t]
		if !ok || slices.Contains(seen, id) {
			continue
		}
		seen = append(seen, id)
		idf := ix.idf[id]
		for _, p := range ix.postings[id] {
			if allowed != nil && !allowed[p.doc] {
				continue
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * (ix.K1 + 1) / (tf + ix.norm[p.doc])
		}
	}
}

// Search returns the k best documents for the query with their scores, best
// first; documents scoring 0 are left out. Ties break by document number.
func (ix *BM25) Search(query []string, k int, allowed []bool) []Scored {
	scores := make([]float64, ix.Len())
	ix.Scores(query, allowed, scores)
	return TopK(scores, k, func(d int) bool { return scores[d] > 0 })
}

// Scored is a document number with its score.
type Scored struct {
	Doc   int
	Score float64
}

// TopK returns the k highest scores among the documents keep accepts (nil:
// all), best first, ties broken by the lower document number. It keeps a
// min-heap of size k: O(n log k).
func TopK(scores []float64, k int, keep func(int) bool) []Scored {
	return topK(scores, k, nil, false, keep)
}

// topK is TopK with the common conditions inlined: mask (nil: all) and
// positive (only scores above 0) are checked before keep (nil: none), so
// a search over many tools calls no function per document.
func topK(scores []float64, k int, mask []bool, positive bool, keep func(int) bool) []Scored {
	if k <= 0 {
		return nil
	}
	h := make([]Scored, 0, k)
	// Until the heap holds k documents, each one that passes goes in.
	d := 0
	for ; d < len(scores) && len(h) < k; d++ {
		s := scores[d]
		if positive && s <= 0 || mask != nil && !mask[d] || keep != nil && !keep(d) {
			continue
		}
		h = append(h, Scored{d, s})
		for i := len(h) - 1; i > 0; {
			p := (i - 1) / 2
			if !ranksBelow(h[i], h[p]) {
				break
			}
			h[i], h[p] = h[p], h[i]
			i = p
		}
	}
	if len(h) < k {
		return sortScored(h, ranksBelow)
	}
	// Then a document enters only above the heap's least score: one that
	// ties it comes later and so ranks below it. Most documents fail that
	// single comparison.
	least := h[0].Score
	for ; d < len(scores); d++ {
		s := scores[d]
		if s <= least {
			continue
		}
		if positive && s <= 0 || mask != nil && !mask[d] || keep != nil && !keep(d) {
			continue
		}
		h[0] = Scored{d, s}
		siftDown(h, 0)
		least = h[0].Score
	}
	return sortScored(h, ranksBelow)
}

// ranksBelow tells whether a ranks below b: a lower score, or the same
// score and a higher document number.
func ranksBelow(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.Doc > b.Doc
}

// siftDown moves h[i] down the min-heap h (least-ranked at the root) to
// its place.
func siftDown(h []Scored, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && ranksBelow(h[r], h[l]) {
			m = r
		}
		if !ranksBelow(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sortScored sorts the heap h best first by less (a ranks below b).
func sortScored(h []Scored, less func(a, b Scored) bool) []Scored {
	slices.SortFunc(h, func(a, b Scored) int {
		switch {
		case less(b, a):
			return -1
		case less(a, b):
			return 1
		}
		return 0
	})
	return h
}
