package embeddings

import (
	"context"
	"math"
	"slices"
	"sort"
	"sync"
)

// SoftMatch re-scores the first candidates of a search by how well the
// tool's own words cover the request's words in the pretrained word
// vectors: each request word (SIF-weighted, stop words left out) counts
// its best cosine with any word of the tool (its name split, its
// description, its parameters' names and descriptions), BERTScore's recall
// with word vectors in place of contextual ones. An average vector blurs a
// request into one direction; word by word, "codebase" still finds
// "repository" in a tool whose other words are about something else, and
// a request word no tool word resembles adds nothing. A word outside the
// vocabulary (a product name, another script) counts only where the tool
// has the same word.
//
// It runs on the fused list's first Depth hits only, so its cost does not
// grow with the registry: the request's words against the distinct words
// of those candidates, each pair's cosine computed once.
type SoftMatch struct {
	words *WordVectors
	opts  SoftMatchOptions
	// inv is 1/|v| of every word vector (0 for a zero vector).
	inv []float32
	// rows are the word vectors decoded once, dim floats per word.
	rows []float32
	dim  int
}

// SoftMatchOptions tune a SoftMatch. The zero value means the documented
// defaults; Weight ≤ 0 turns soft matching off.
type SoftMatchOptions struct {
	// Weight of the soft-match score added to the fused score (which is
	// first divided by the list's best).
	Weight float64
	// Depth is how many fused candidates are re-scored (default
	// DefaultSoftMatchDepth).
	Depth int
	// Floor: a word pair's cosine counts only above it, rescaled so that
	// an exact match is 1 (default DefaultSoftMatchFloor; negative: 0).
	Floor float64
	// MaxWords caps the request words that count, the heaviest kept
	// (default DefaultSoftMatchWords): a paragraph-long request costs no
	// more than a sentence.
	MaxWords int
	// Relative divides each candidate's soft-match score by the best
	// among the candidates, as the fused score is.
	Relative bool
	// NoParams leaves the parameters' names and descriptions out of a
	// tool's words; Group adds the tool's group (server) name.
	NoParams, Group bool
	// Precision is the share of the score that is precision (how well the
	// request covers the tool's words, each SIF-weighted) rather than
	// recall (how well the tool covers the request's): 0 recall only, 1
	// precision only, the harmonic mean (F1) when Harmonic.
	Precision float64
	Harmonic  bool
	// IDF weighs each request word by its inverse document frequency over
	// the registry's tools (a word every tool has tells none apart) times
	// its SIF weight.
	IDF bool
}

// Defaults of SoftMatchOptions (chosen on the development splits:
// EVALS.md).
const (
	DefaultSoftMatchDepth = 30
	DefaultSoftMatchFloor = 0.3
	DefaultSoftMatchWords = 24
)

func (o *SoftMatchOptions) defaults() {
	if o.Depth <= 0 {
		o.Depth = DefaultSoftMatchDepth
	}
	if o.Floor == 0 {
		o.Floor = DefaultSoftMatchFloor
	}
	if o.Floor < 0 {
		o.Floor = 0
	}
	if o.MaxWords <= 0 {
		o.MaxWords = DefaultSoftMatchWords
	}
}

// NewSoftMatch is a SoftMatch over the word vectors w (their per-word
// vectors: a word map applies to averages, not to words).
func NewSoftMatch(w *WordVectors, o SoftMatchOptions) *SoftMatch {
	o.defaults()
	s := &SoftMatch{words: w, opts: o, inv: make([]float32, len(w.weight)), dim: w.dim}
	s.rows = make([]float32, len(w.weight)*w.dim)
	for i := range s.inv {
		w.row(i, s.rows[i*w.dim:(i+1)*w.dim])
	}
	for i := range s.inv {
		n := float64(dot32(s.row(int32(i)), s.row(int32(i))))
		if n > 0 {
			s.inv[i] = float32(1 / math.Sqrt(n))
		}
	}
	return s
}

// Options are the options in force (defaults filled).
func (s *SoftMatch) Options() SoftMatchOptions { return s.opts }

// SoftMatcher is an Embedder that re-scores an index's first candidates
// with a SoftMatch (nil: it does not).
type SoftMatcher interface {
	SoftMatch() *SoftMatch
}

// row is word k's vector, from the table NewSoftMatch decoded once: the
// soft match compares every request word with every candidate's words, too
// often to rebuild a word's row per comparison.
func (s *SoftMatch) row(k int32) []float32 { return s.rows[int(k)*s.dim : (int(k)+1)*s.dim] }

// toolWords are a document's distinct known words (vocabulary ids) and
// its distinct unknown ones, each sorted.
type toolWords struct {
	known   []int32
	unknown []string
}

// softDocs holds every document's toolWords, built on first use.
type softDocs struct {
	once  sync.Once
	words []toolWords
	// df counts the documents that have each known word; udf each
	// unknown one.
	df  map[int32]int
	udf map[string]int
}

func (s *SoftMatch) docWords(d *Doc) toolWords {
	texts := []string{d.Name, d.Description}
	if !s.opts.NoParams {
		for _, p := range d.Params {
			texts = append(texts, p.Name, p.Description)
		}
	}
	if s.opts.Group {
		texts = append(texts, d.Group)
	}
	var tw toolWords
	for _, t := range texts {
		for _, tok := range Tokens(t) {
			if stopwords[tok] {
				continue
			}
			if k, ok := s.words.lookup(tok); ok {
				tw.known = append(tw.known, k)
			} else {
				tw.unknown = append(tw.unknown, tok)
			}
		}
	}
	slices.Sort(tw.known)
	tw.known = slices.Compact(tw.known)
	slices.Sort(tw.unknown)
	tw.unknown = slices.Compact(tw.unknown)
	return tw
}

// words are st's documents' words under s, built once per state.
func (st *state) softWords(s *SoftMatch) []toolWords {
	sd := &st.soft
	sd.once.Do(func() {
		sd.words = make([]toolWords, len(st.docs))
		sd.df, sd.udf = map[int32]int{}, map[string]int{}
		for i := range st.docs {
			tw := s.docWords(&st.docs[i])
			sd.words[i] = tw
			for _, k := range tw.known {
				sd.df[k]++
			}
			for _, u := range tw.unknown {
				sd.udf[u]++
			}
		}
	})
	return sd.words
}

// queryWord is one distinct request word: its vocabulary id (-1: unknown,
// then tok matches only itself) and its weight.
type queryWord struct {
	id  int32
	tok string
	w   float64
}

// queryWords are the request's distinct content words with their SIF
// weights (an unknown word weighs as the rarest known one), the heaviest
// MaxWords of them.
func (s *SoftMatch) queryWords(query string) []queryWord {
	seen := map[string]bool{}
	var out []queryWord
	for _, tok := range Tokens(query) {
		if stopwords[tok] || seen[tok] {
			continue
		}
		seen[tok] = true
		if k, ok := s.words.lookup(tok); ok {
			out = append(out, queryWord{id: k, tok: tok, w: float64(s.words.weight[k])})
		} else {
			out = append(out, queryWord{id: -1, tok: tok, w: 1})
		}
	}
	// Heaviest first; ties keep the request's order (stable), so the cut
	// is deterministic.
	sort.SliceStable(out, func(a, b int) bool { return out[a].w > out[b].w })
	if len(out) > s.opts.MaxWords {
		out = out[:s.opts.MaxWords]
	}
	return out
}

// Scores are the soft-match score in [0, 1] of each document for the
// request (docs: positions in st).
func (s *SoftMatch) scores(st *state, query string, docs []int) []float64 {
	out := make([]float64, len(docs))
	qw := s.queryWords(query)
	if len(qw) == 0 {
		return out
	}
	all := st.softWords(s)
	if s.opts.IDF {
		sd := &st.soft
		n := float64(len(st.docs))
		for i := range qw {
			df := 0
			if qw[i].id >= 0 {
				df = sd.df[qw[i].id]
			} else {
				df = sd.udf[qw[i].tok]
			}
			qw[i].w *= math.Log(1 + n/(float64(df)+0.5))
		}
	}
	total := 0.0
	for _, q := range qw {
		total += q.w
	}
	floor := s.opts.Floor
	// sims[row(u)*nq+i] is the floored cosine of request word i with
	// tool word u, computed the first time a candidate has u.
	nq := len(qw)
	rowOf := map[int32]int{}
	var sims []float32
	qinv := make([]float32, nq)
	for i, q := range qw {
		if q.id >= 0 {
			qinv[i] = s.inv[q.id]
		}
	}
	best := make([]float32, nq)
	for j, d := range docs {
		tw := all[d]
		clear(best)
		for _, u := range tw.known {
			r, ok := rowOf[u]
			if !ok {
				r = len(rowOf)
				rowOf[u] = r
				uv, ui := s.row(u), s.inv[u]
				for i, q := range qw {
					c := float32(0)
					switch {
					case q.id == u:
						c = 1
					case q.id >= 0:
						c = dot32(s.row(q.id), uv) * qinv[i] * ui
						if c > float32(floor) {
							c = (c - float32(floor)) / float32(1-floor)
						} else {
							c = 0
						}
					}
					sims = append(sims, c)
				}
			}
			row := sims[r*nq : (r+1)*nq]
			for i, c := range row {
				if c > best[i] {
					best[i] = c
				}
			}
		}
		sc := 0.0
		for i, q := range qw {
			b := float64(best[i])
			if q.id < 0 {
				if _, found := slices.BinarySearch(tw.unknown, q.tok); found {
					b = 1
				}
			}
			sc += q.w * b
		}
		rec := sc / total
		if s.opts.Precision <= 0 && !s.opts.Harmonic {
			out[j] = rec
			continue
		}
		// Precision: each tool word's best cosine with a request word.
		ps, pt := 0.0, 0.0
		for _, u := range tw.known {
			row := sims[rowOf[u]*nq : (rowOf[u]+1)*nq]
			m := float32(0)
			for _, c := range row {
				m = max(m, c)
			}
			w := float64(s.words.weight[u])
			ps += w * float64(m)
			pt += w
		}
		for _, t := range tw.unknown {
			pt++
			for _, q := range qw {
				if q.id < 0 && q.tok == t {
					ps++
					break
				}
			}
		}
		prec := 0.0
		if pt > 0 {
			prec = ps / pt
		}
		if s.opts.Harmonic {
			if prec+rec > 0 {
				out[j] = 2 * prec * rec / (prec + rec)
			}
			continue
		}
		out[j] = (1-s.opts.Precision)*rec + s.opts.Precision*prec
	}
	return out
}

// rescore re-orders the first Depth hits (best first) by their fused
// score, divided by the best, plus Weight times their soft-match score;
// the hits after them keep their order and their divided fused score, so
// every re-scored hit stays ahead of them.
func (s *SoftMatch) rescore(st *state, query string, hits []Hit) {
	if len(hits) == 0 || hits[0].Fused <= 0 {
		return
	}
	top := hits[0].Fused
	for i := range hits {
		hits[i].Fused /= top
	}
	n := min(len(hits), s.opts.Depth)
	docs := make([]int, 0, n)
	for _, h := range hits[:n] {
		d, ok := st.pos[h.ID]
		if !ok {
			return
		}
		docs = append(docs, d)
	}
	sc := s.scores(st, query, docs)
	if s.opts.Relative {
		b := 0.0
		for _, v := range sc {
			b = max(b, v)
		}
		if b > 0 {
			for i := range sc {
				sc[i] /= b
			}
		}
	}
	for i := range sc {
		hits[i].Fused += s.opts.Weight * sc[i]
	}
	slices.SortStableFunc(hits[:n], byFused)
}

// SoftMatchScores are the soft-match scores of the indexed tools ids for
// a request, under the index embedder's SoftMatch (nil when it has none
// or an id is not indexed): for tests and analysis.
func (ix *Index) SoftMatchScores(query string, ids []string) []float64 {
	sm, ok := ix.emb.(SoftMatcher)
	if !ok || sm.SoftMatch() == nil {
		return nil
	}
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	docs := make([]int, len(ids))
	for i, id := range ids {
		d, ok := st.pos[id]
		if !ok {
			return nil
		}
		docs[i] = d
	}
	return sm.SoftMatch().scores(st, query, docs)
}

// searchFinal is Search with its first candidates re-scored by s (if
// any), then re-ranked by the final reranker r (if any).
func (ix *Index) searchFinal(ctx context.Context, s *SoftMatch, r *Reranker, query string, k int, f Filter) ([]Hit, error) {
	if r != nil && r.WholeOnly && requestParts(query, ix.opts.Parts.resolved()) != nil {
		if r = nil; s == nil {
			return ix.searchRanked(ctx, query, k, f)
		}
	}
	depth := k
	if s != nil {
		depth = max(depth, s.opts.Depth)
	}
	if r != nil {
		depth = max(depth, r.Depth)
	}
	hits, err := ix.searchRanked(ctx, query, depth, f)
	if err != nil || len(hits) == 0 {
		return hits, err
	}
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	for _, h := range hits {
		if _, ok := st.pos[h.ID]; !ok {
			return hits[:min(k, len(hits))], nil // synced meanwhile: as found
		}
	}
	if s != nil {
		s.rescore(st, query, hits)
	}
	if r != nil {
		n := min(len(hits), r.Depth)
		last := hits[n-1].Fused
		st.rerank(r, query, hits[:n], &ix.opts)
		// The hits after the re-ranked ones stay after them, in their
		// order, on the same scale.
		low := hits[n-1].Fused
		for i := n; i < len(hits); i++ {
			if last > 0 {
				hits[i].Fused = low * hits[i].Fused / last
			} else {
				hits[i].Fused = 0
			}
		}
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// finalReranker is the index's reranker when it re-ranks the final list.
func (ix *Index) finalReranker() *Reranker {
	if r := ix.opts.Reranker; r != nil && r.Final {
		return r
	}
	return nil
}

// softMatch is the index embedder's SoftMatch, nil when it has none.
func (ix *Index) softMatch() *SoftMatch {
	if sm, ok := ix.emb.(SoftMatcher); ok {
		return sm.SoftMatch()
	}
	return nil
}
