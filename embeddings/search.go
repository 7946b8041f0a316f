package embeddings

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Filter restricts a search before ranking: only documents passing every
// condition are scored in either list.
type Filter struct {
	// MinTrust drops tools whose trust level is below it.
	MinTrust int
	// Capabilities the caller holds, checked when CheckCapabilities is set:
	// a tool passes when each capability it requires is held exactly or as
	// Kind(*). (The selector may instead resolve capabilities with the
	// pipeline's own rules and pass the result as IDs.)
	Capabilities      []string
	CheckCapabilities bool
	// Where must match the document's Metadata on every key (chromem-go's
	// where semantics).
	Where map[string]string
	// IDs, when non-nil, is the set of documents that may be returned.
	IDs []string

	// mask is the filter's mask over the state maskOf, computed once when
	// a request is searched whole and part by part.
	mask   []bool
	maskOf *state
}

func (f *Filter) empty() bool {
	return f.MinTrust <= 0 && !f.CheckCapabilities && len(f.Where) == 0 && f.IDs == nil
}

// Hit is one search result. Dense is the cosine similarity (with the group
// term), BM25 the BM25 score (with the group term), Fused the RRF score the
// (or combined score) the hits are ranked by; the ranks are 1-based positions in each list, 0 when
// the document was not among that list's candidates.
type Hit struct {
	ID        string  `json:"id"`
	Dense     float64 `json:"dense"`
	BM25      float64 `json:"bm25"`
	Fused     float64 `json:"fused"`
	DenseRank int     `json:"dense_rank,omitempty"`
	BM25Rank  int     `json:"bm25_rank,omitempty"`
}

// allowed computes the filter's mask over st (nil: everything passes).
func (st *state) allowed(f *Filter) []bool {
	if f.empty() {
		return nil
	}
	if f.maskOf == st {
		return f.mask
	}
	n := len(st.docs)
	mask := make([]bool, n)
	if f.IDs != nil {
		// The allowed IDs set the mask; the other conditions clear it.
		for _, id := range f.IDs {
			if i, ok := st.pos[id]; ok {
				mask[i] = true
			}
		}
	} else {
		for i := range mask {
			mask[i] = true
		}
	}
	// held[c]: the caller holds the registry's capability c exactly or as
	// Kind(*); decided once per distinct capability, not per document.
	var held []bool
	if f.CheckCapabilities {
		have := make(map[string]bool, len(f.Capabilities))
		for _, c := range f.Capabilities {
			have[c] = true
		}
		held = make([]bool, len(st.capNames))
		for c, name := range st.capNames {
			held[c] = have[name] || have[wildcard(name)]
		}
	}
	minTrust := int32(f.MinTrust)
outer:
	for i := 0; i < n; i++ {
		if !mask[i] {
			continue
		}
		if st.trust[i] < minTrust {
			mask[i] = false
			continue
		}
		if held != nil {
			for _, c := range st.caps[i] {
				if !held[c] {
					mask[i] = false
					continue outer
				}
			}
		}
		if len(f.Where) > 0 {
			md := st.docs[i].Metadata
			for k, v := range f.Where {
				if md[k] != v {
					mask[i] = false
					continue outer
				}
			}
		}
	}
	return mask
}

// wildcard turns Kind(arg) into Kind(*).
func wildcard(c string) string {
	if i := strings.IndexByte(c, '('); i >= 0 {
		return c[:i] + "(*)"
	}
	return c
}

// Search returns the k best documents for the query: the dense and BM25
// rankings of the documents passing f, fused by reciprocal rank fusion,
// then re-ranked by the index's Adapter when one is set and knows a term
// of the query. Ties break by ID. A long request that states several
// needs is searched whole and part by part, and the lists fused (parts.go).
func (ix *Index) Search(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	if k > 0 {
		if s, r := ix.softMatch(), ix.finalReranker(); s != nil || r != nil {
			return ix.searchFinal(ctx, s, r, query, k, f)
		}
	}
	return ix.searchRanked(ctx, query, k, f)
}

// searchRanked is Search before its final re-scoring (softmatch.go).
func (ix *Index) searchRanked(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	if k > 0 {
		o := ix.opts.Parts.resolved()
		if parts := requestPartTerms(query, o); parts != nil {
			return ix.searchParts(ctx, query, parts, k, f, o)
		}
	}
	return ix.searchWhole(ctx, query, k, f)
}

// searchWhole is Search of the request as one query.
func (ix *Index) searchWhole(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	return ix.searchWholeWith(ctx, query, k, f, &ix.opts)
}

// searchWholeWith is searchWhole under the options o.
func (ix *Index) searchWholeWith(ctx context.Context, query string, k int, f Filter, o *Options) ([]Hit, error) {
	a := ix.Adapter()
	if a == nil || k <= 0 {
		return ix.searchWith(ctx, query, k, f, o)
	}
	terms := distinctTerms(query)
	if !a.knows(terms) {
		return ix.searchWith(ctx, query, k, f, o)
	}
	hits, err := ix.searchWith(ctx, query, max(k, adapterDepth), f, o)
	if err != nil {
		return nil, err
	}
	a.rerank(terms, hits)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// search is Search without the adapter: the base ranking, the fused list
// re-ranked by the index's Reranker when it has one.
func (ix *Index) search(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	return ix.searchWith(ctx, query, k, f, &ix.opts)
}

// searchWith is search under the options o.
func (ix *Index) searchWith(ctx context.Context, query string, k int, f Filter, o *Options) ([]Hit, error) {
	r := o.Reranker
	if r == nil || r.Final || k <= 0 {
		hits, _, err := ix.fusedSearchWith(ctx, query, k, f, o)
		return hits, err
	}
	hits, st, err := ix.fusedSearchWith(ctx, query, max(k, r.Depth), f, o)
	if err != nil {
		return nil, err
	}
	st.rerank(r, query, hits, o)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

// fusedSearch is the k best of the dense and BM25 lists fused, and the
// state they were found in.
func (ix *Index) fusedSearch(ctx context.Context, query string, k int, f Filter) ([]Hit, *state, error) {
	return ix.fusedSearchWith(ctx, query, k, f, &ix.opts)
}

// fusedSearchWith is fusedSearch under the options o.
func (ix *Index) fusedSearchWith(ctx context.Context, query string, k int, f Filter, o *Options) ([]Hit, *state, error) {
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	if k <= 0 || len(st.docs) == 0 {
		return nil, st, nil
	}
	embedder := ix.emb.ID() // what the query is embedded under
	qv, err := ix.embedQuery(ctx, query)
	if err != nil {
		return nil, st, err
	}
	if len(qv) != 1 || len(qv[0]) != st.dim {
		return nil, st, fmt.Errorf("embeddings: query vector of dimension %d, index has %d", len(qv[0]), st.dim)
	}
	if ds, ok := o.Store.(DenseSearcher); ok && !o.DenseInMemory {
		hits, err := st.searchStore(ctx, ds, embedder, qv[0], Terms(query), k, f, o)
		return hits, st, err
	}
	return st.search(qv[0], Terms(query), k, f, o), st, nil
}

// queryMemo keeps a request's vector for the rest of one search that
// needs it twice (searchParts: the whole request's search, then the
// cosine of the tools only a part found); it travels in the context.
type queryMemo struct {
	query string
	v     []float32
}

type queryMemoKey struct{}

// embedQuery embeds the query, or takes its vector from the context's
// queryMemo, which it fills.
func (ix *Index) embedQuery(ctx context.Context, query string) ([][]float32, error) {
	m, _ := ctx.Value(queryMemoKey{}).(*queryMemo)
	if m != nil && m.v != nil && m.query == query {
		return [][]float32{m.v}, nil
	}
	qv, err := ix.emb.Embed(ctx, []string{query})
	if err == nil && m != nil && m.query == query && len(qv) == 1 {
		m.v = qv[0]
	}
	return qv, err
}

func (st *state) search(qv []float32, qterms []string, k int, f Filter, o *Options) []Hit {
	n := len(st.docs)
	mask := st.allowed(&f)

	// The two score arrays are scratch, reused across searches: at 10,000
	// tools each is 80 KB a query for the collector otherwise.
	dp, sp := scratchFloats(n), scratchFloats(n)
	defer floatPool.Put(dp)
	defer floatPool.Put(sp)
	dense := *dp
	st.dots(qv, dense)
	if st.nGroups > 0 && o.GroupWeight > 0 {
		gp := scratchFrom(&groupPool, st.nGroups)
		defer groupPool.Put(gp)
		gsum := *gp
		clear(gsum)
		for i, g := range st.groupOf {
			if g >= 0 {
				gsum[g] += dense[i]
			}
		}
		for i, g := range st.groupOf {
			if g >= 0 && st.groupNorm[g] > 0 {
				dense[i] += o.GroupWeight * gsum[g] / st.groupNorm[g]
			}
		}
	}
	sparse, sl := st.sparseList(qterms, max(o.Depth, k), mask, o, *sp)
	dl := topK(dense, max(o.Depth, k), mask, false, nil)
	return st.fuse(dl, sl, func(d int) float64 { return dense[d] }, sparse, k, o)
}

// byFused orders hits best first, ties by ID.
func byFused(a, b Hit) int {
	if a.Fused != b.Fused {
		if a.Fused > b.Fused {
			return -1
		}
		return 1
	}
	return strings.Compare(a.ID, b.ID)
}

// floatPool holds scratch score arrays (*[]float64) of searches, one per
// document; groupPool those of one per group.
var floatPool, groupPool sync.Pool

// scratchFloats is a pooled array of n float64s, contents undefined; Put
// it back in floatPool when done.
func scratchFloats(n int) *[]float64 { return scratchFrom(&floatPool, n) }

// scratchFrom is a pooled array of n float64s from pool, contents
// undefined; Put it back in pool when done.
func scratchFrom(pool *sync.Pool, n int) *[]float64 {
	if p, _ := pool.Get().(*[]float64); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

// float32Pool holds the dense scan's scratch arrays (*[]float32) of one
// float per document; queryPool its aligned copies of the query.
var float32Pool, queryPool sync.Pool

// scratchFloat32s is a pooled array of n float32s, contents undefined; Put
// it back in float32Pool when done.
func scratchFloat32s(n int) *[]float32 { return scratchFloat32sFrom(&float32Pool, n) }

// scratchFloat32sFrom is a pooled array of n float32s from pool, contents
// undefined; Put it back in pool when done.
func scratchFloat32sFrom(pool *sync.Pool, n int) *[]float32 {
	if p, _ := pool.Get().(*[]float32); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

// placePool holds zeroed position tables (*[]int32) of fuse.
var placePool sync.Pool

// scratchPlaces is a pooled table of n zeros; whoever takes it sets the
// entries it uses back to zero before putting it back in placePool.
func scratchPlaces(n int) *[]int32 {
	if p, _ := placePool.Get().(*[]int32); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]int32, n)
	return &s
}

// sparseList is the BM25 score of every document (group term included)
// and the best n of those passing the mask, in sparse (len: the
// documents; overwritten).
func (st *state) sparseList(qterms []string, n int, mask []bool, o *Options, sparse []float64) ([]float64, []Scored) {
	clear(sparse)
	st.bm.Scores(qterms, mask, sparse)
	if st.nGroups > 0 && o.GroupWeight > 0 {
		gp := scratchFrom(&groupPool, st.nGroups)
		defer groupPool.Put(gp)
		gs := *gp
		clear(gs)
		st.groupBM.Scores(qterms, nil, gs)
		// A part of a request often matches no group's text: then the
		// pass over every document adds nothing.
		if slices.ContainsFunc(gs, func(s float64) bool { return s != 0 }) {
			for i, g := range st.groupOf {
				if g >= 0 && (mask == nil || mask[i]) {
					sparse[i] += o.GroupWeight * gs[g]
				}
			}
		}
	}
	sl := topK(sparse, n, mask, true, nil)
	return sparse, sl
}

// fuse combines the dense list dl and the sparse list sl (best first) into
// the k best hits; dense(d) is document d's dense score whether or not it
// is in dl.
func (st *state) fuse(dl, sl []Scored, dense func(int) float64, sparse []float64, k int, o *Options) []Hit {
	// Hits live in one slice, found by document through idx: no
	// allocation per candidate.
	hits := make([]Hit, 0, len(dl)+len(sl))
	// at[d] is 1 + document d's place in hits (0: not yet there): a pooled
	// table as long as the registry, whose used entries are cleared on
	// return, so a search neither hashes nor clears the whole table.
	ap := scratchPlaces(len(st.docs))
	at := *ap
	defer func() {
		for _, s := range dl {
			at[s.Doc] = 0
		}
		for _, s := range sl {
			at[s.Doc] = 0
		}
		placePool.Put(ap)
	}()
	get := func(d int) *Hit {
		i := at[d] - 1
		if i < 0 {
			// A trained encoder's cosine can be negative: for callers
			// (thresholds, notices) that means no similarity.
			i = int32(len(hits))
			at[d] = i + 1
			hits = append(hits, Hit{ID: st.docs[d].ID, Dense: max(dense(d)+st.biasOf(d), 0), BM25: sparse[d]})
		}
		return &hits[i]
	}
	// Each list's scores are scaled to (lo, hi] → (0, 1].
	var dlo, dhi, slo, shi float64
	if len(dl) > 0 {
		dhi = dl[0].Score
		if o.Norm == "minmax" && len(dl) > 1 {
			dlo = dl[len(dl)-1].Score
		}
		// A hubness correction can leave no score above 0 (a vague
		// request in a small registry): scaled from 0 the list would then
		// count for nothing, so its least score is the floor.
		if last := dl[len(dl)-1].Score; dhi <= 0 && last < dhi {
			dlo = last
		}
	}
	if len(sl) > 0 {
		shi = sl[0].Score
		if o.Norm == "minmax" && len(sl) > 1 {
			slo = sl[len(sl)-1].Score
		}
	}
	for r, s := range dl {
		h := get(s.Doc)
		h.DenseRank = r + 1
		if o.Fusion != "rrf" {
			if dhi > dlo {
				h.Fused += o.DenseWeight * (s.Score - dlo) / (dhi - dlo)
			}
		} else {
			h.Fused += o.DenseWeight / (o.RRFK + float64(r+1))
		}
	}
	for r, s := range sl {
		h := get(s.Doc)
		h.BM25Rank = r + 1
		if o.Fusion != "rrf" {
			if shi > slo {
				h.Fused += o.SparseWeight * (s.Score - slo) / (shi - slo)
			}
		} else {
			h.Fused += o.SparseWeight / (o.RRFK + float64(r+1))
		}
	}
	slices.SortFunc(hits, byFused)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// biasOf is what document d's dense score was lowered by when ranked
// (DocBiaser): a hit reports the cosine itself.
func (st *state) biasOf(d int) float64 {
	if st.bias == nil {
		return 0
	}
	return float64(st.bias[d])
}

// parallelDots is the registry size from which the dense scan is split
// across GOMAXPROCS goroutines.
const parallelDots = 4096

// dots computes q·v for every document (filtered ones too: group centroids
// include them; the filter applies when the lists are cut), as float32
// products of the stored rows with q, widened to float64.
func (st *state) dots(q []float32, out []float64) {
	n := len(st.docs)
	yp := scratchFloat32s(n)
	defer float32Pool.Put(yp)
	y := *yp
	scan := func(lo, hi int) {
		rowDots(st.vecs[lo*st.dim:hi*st.dim], q, y[lo:hi])
		if st.bias != nil {
			for i := lo; i < hi; i++ {
				out[i] = float64(y[i]) - float64(st.bias[i])
			}
			return
		}
		for i := lo; i < hi; i++ {
			out[i] = float64(y[i])
		}
	}
	workers := runtime.GOMAXPROCS(0)
	if n < parallelDots || workers < 2 {
		scan(0, n)
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			scan(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

// rowDots sets y[i] to the dot product of q with row i of rows (len(y)
// rows of len(q) floats, back to back): one matrix-vector product, whose
// vectorised kernel scans a large registry several times faster than a
// dot product called row by row.
//
// The kernel adds the products before q's first 16-byte boundary one by
// one and the rest four lanes at a time, so the float32 sums depend on
// where q lies in memory; q is therefore copied to a 16-byte boundary
// first, and the same query gives the same bits in every search.
func rowDots(rows, q, y []float32) {
	if len(y) == 0 {
		return
	}
	if len(q) == 0 {
		clear(y)
		return
	}
	bp := scratchFloat32sFrom(&queryPool, len(q)+3)
	defer queryPool.Put(bp)
	aq := aligned16(*bp)[:len(q)]
	copy(aq, q)
	blas32.Gemv(blas.NoTrans, 1,
		blas32.General{Rows: len(y), Cols: len(q), Stride: len(q), Data: rows},
		blas32.Vector{N: len(q), Inc: 1, Data: aq},
		0, blas32.Vector{N: len(y), Inc: 1, Data: y})
}

// aligned16 is buf from its first element on a 16-byte boundary (buf has
// three floats to spare).
func aligned16(buf []float32) []float32 {
	off := (16 - int(uintptr(unsafe.Pointer(unsafe.SliceData(buf)))%16)) % 16 / 4
	return buf[off:]
}

// dot is the dot product of the query q with one stored row, by rowDots:
// the vectorised kernel's summation order depends on the vectors'
// alignment, and a single row's score must equal the scan's bit for bit.
func dot(q, row []float32) float32 {
	var y [1]float32
	rowDots(row[:len(q)], q, y[:])
	return y[0]
}

// dot32 is the dot product of equal-length vectors in eight lanes, the
// trainers' (a fixed summation order: retraining writes the same bytes): lane j
// sums the products at positions j, j+8, j+16, … in order, and the lanes
// are added pairwise. Lanes 0–3 are summed in one pass and lanes 4–7 in a
// second: eight accumulators and eight products in flight at once exceed
// amd64's fifteen usable float registers, and the spilled accumulator's
// round trip through memory bounded the single pass.
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	n := len(a) &^ 7
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for i := 0; i < n; i += 8 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
	}
	for i := 4; i < n; i += 8 {
		aa, bb := a[i:i+4:i+4], b[i:i+4:i+4]
		s4 += aa[0] * bb[0]
		s5 += aa[1] * bb[1]
		s6 += aa[2] * bb[2]
		s7 += aa[3] * bb[3]
	}
	for i := n; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
