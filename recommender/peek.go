package recommender

import "sort"

// Peek returns the caller's live recommendations, best first, like List
// but without marking them seen: it is for machinery that acts on
// predictions (the engine's speculative execution), not for a person, and
// "seen" is what a person saw.
func (r *Recommender) Peek(caller string) []Recommendation {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs, ok := r.callers[caller]
	if !ok {
		return nil
	}
	out := make([]Recommendation, 0, len(cs.active))
	for _, rec := range cs.active {
		out = append(out, *rec)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}
