package retrieval

import "math"

// Metrics are averages over a dataset's queries, as fractions in 0..1.
type Metrics struct {
	N        int
	Acc1     float64
	Recall5  float64
	Recall10 float64
	NDCG5    float64
	NDCG10   float64
}

// accumulator sums per-query metrics.
type accumulator struct{ m Metrics }

// add scores one ranking (best first) against the gold set. With several
// gold tools, Acc@1 counts the first result being any of them, Recall@k is
// the share of gold tools in the top k, and NDCG@k uses binary relevance
// with the ideal ranking putting min(|gold|, k) relevant tools first.
func (a *accumulator) add(ranked []string, gold []string) {
	g := make(map[string]bool, len(gold))
	for _, id := range gold {
		g[id] = true
	}
	a.m.N++
	if len(ranked) > 0 && g[ranked[0]] {
		a.m.Acc1++
	}
	a.m.Recall5 += recallAt(ranked, g, 5)
	a.m.Recall10 += recallAt(ranked, g, 10)
	a.m.NDCG5 += ndcgAt(ranked, g, 5)
	a.m.NDCG10 += ndcgAt(ranked, g, 10)
}

func (a *accumulator) result() Metrics {
	m := a.m
	if m.N == 0 {
		return m
	}
	n := float64(m.N)
	m.Acc1 /= n
	m.Recall5 /= n
	m.Recall10 /= n
	m.NDCG5 /= n
	m.NDCG10 /= n
	return m
}

func recallAt(ranked []string, gold map[string]bool, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	hit := 0
	for i := 0; i < k && i < len(ranked); i++ {
		if gold[ranked[i]] {
			hit++
		}
	}
	return float64(hit) / float64(len(gold))
}

func ndcgAt(ranked []string, gold map[string]bool, k int) float64 {
	dcg := 0.0
	for i := 0; i < k && i < len(ranked); i++ {
		if gold[ranked[i]] {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	ideal := 0.0
	for i := 0; i < k && i < len(gold); i++ {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}
