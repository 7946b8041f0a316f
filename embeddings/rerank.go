package embeddings

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"slices"
	"sync"
)

// A Reranker re-orders the first Depth candidates of the fused list by a
// learned linear score over features of each (request, tool) pair: the
// two lists' scores and ranks, BM25 over the name, the description and
// the parameters apart, how much of the request the tool's words cover,
// whether the tool's name words (its verb, its object) are in the
// request, and the tool's length (RerankFeatures). It is fitted on
// development requests (TrainReranker), so the mix of the model, BM25 and
// the fields is learned rather than hand-set; the fused list stays the
// candidate generator, so a tool outside it is never promoted.
//
// A Reranker is tied to the embedder it was fitted over (Embedder): the
// dense score's scale is that embedder's. The index applies the one its
// embedder carries (RerankAdvisor) when that one is marked Default, or
// the one Options name.
type Reranker struct {
	Version int `json:"version"`
	// Embedder is the ID of the embedder whose scores it was fitted on.
	Embedder string `json:"embedder"`
	// Default marks the reranker the index applies unasked over its
	// embedder (RerankAdvisor); otherwise it is used only when named
	// (Options.Reranker, 'airs eval retrieval --reranker').
	Default bool `json:"default"`
	// Depth is how many fused candidates are re-ranked.
	Depth int `json:"depth"`
	// Final re-ranks the search's final list (after a request's parts
	// were searched and fused: FinalCandidates) instead of the whole
	// request's fused list (Candidates).
	Final bool `json:"final,omitempty"`
	// WholeOnly (with Final) leaves a request that is searched part by
	// part (PartsOptions) in its fused order: only requests searched whole
	// are re-ranked.
	WholeOnly bool `json:"whole_only,omitempty"`
	// Features name the inputs, in order (RerankFeatures at fitting time).
	Features []string `json:"features"`
	// Mean and Scale standardise each feature before the weights apply.
	Mean  []float64 `json:"mean"`
	Scale []float64 `json:"scale"`
	// Weights of the standardised features: the linear part of the score.
	Weights []float64 `json:"weights"`
	// Known are the tools the embedder was trained on (ToolKey of each),
	// sorted: the "known" features say whether a candidate is one.
	Known []string `json:"known,omitempty"`
	known map[string]bool
	// Trees are boosted regression trees over the raw features, their
	// outputs added to the linear part (none: a linear reranker).
	Trees []RerankTree `json:"trees,omitempty"`
	// Train records how it was fitted (data, folds, regularisation).
	Train map[string]any `json:"train,omitempty"`
}

const rerankerVersion = 1

// RerankFeatures are the names of the features a Reranker weighs, in the
// order Candidates returns them. "rel" features are divided by the best
// value among the query's candidates; ranks are log(1+rank), with a rank
// beyond the list's depth for a candidate the list did not return.
var RerankFeatures = []string{
	"fused_rel", "fused_rank",
	"dense", "dense_rel", "dense_rank",
	"bm25_rel", "bm25_rank",
	"name_bm25_rel", "desc_bm25_rel", "param_bm25_rel", "group_bm25_rel",
	"name_bm25", "desc_bm25",
	"cover", "cover_idf", "desc_cover", "name_cover", "name_hits",
	"name_first", "name_last", "name_exact",
	"desc_len", "params",
	"dense_gap", "dense_rel_conf", "bm25_rel_conf", "name_bm25_rel_conf",
	"strength", "dense_rel_strength", "bm25_rel_strength",
	"known", "dense_rel_known", "bm25_rel_known",
	// Under a Blend: the model's and the word vectors' cosines apart,
	// and the word-by-word soft match (SoftMatch's recall and precision).
	"model_cos_rel", "words_cos_rel", "soft_rel", "soft_prec_rel",
}

// rerankFeaturesV1 is how many features a reranker fitted before the
// blend's were added names: it scores as before, the later ones weighed 0.
const rerankFeaturesV1 = 33

// RerankAdvisor is an Embedder that carries a Reranker fitted for it.
type RerankAdvisor interface {
	Reranker() *Reranker
}

// check tells whether r can score this build's features.
func (r *Reranker) check() error {
	if r.Version != rerankerVersion {
		return fmt.Errorf("version %d, want %d", r.Version, rerankerVersion)
	}
	if len(r.Features) == rerankFeaturesV1 && slices.Equal(r.Features, RerankFeatures[:rerankFeaturesV1]) &&
		len(r.Mean) == len(r.Features) && len(r.Scale) == len(r.Features) && len(r.Weights) == len(r.Features) {
		// Fitted before the blend's features: they weigh nothing.
		pad := len(RerankFeatures) - rerankFeaturesV1
		r.Features = RerankFeatures
		r.Mean = append(r.Mean, make([]float64, pad)...)
		r.Scale = append(r.Scale, make([]float64, pad)...)
		r.Weights = append(r.Weights, make([]float64, pad)...)
	}
	if !slices.Equal(r.Features, RerankFeatures) || len(r.Mean) != len(r.Features) ||
		len(r.Scale) != len(r.Features) || len(r.Weights) != len(r.Features) {
		return fmt.Errorf("its features are not this build's (%d named, %d weights; want %d): refit it with 'airs train retrieval --reranker'",
			len(r.Features), len(r.Weights), len(RerankFeatures))
	}
	if r.Depth <= 0 {
		return fmt.Errorf("depth %d", r.Depth)
	}
	for i := range r.Trees {
		if err := r.Trees[i].check(len(r.Features)); err != nil {
			return err
		}
	}
	r.known = KnownTools(r.Known)
	return nil
}

// Score is the reranker's score of one feature vector.
func (r *Reranker) Score(x []float64) float64 {
	s := r.linear(x)
	for i := range r.Trees {
		s += r.Trees[i].eval(x)
	}
	return s
}

func (r *Reranker) linear(x []float64) float64 {
	s := 0.0
	for i, v := range x {
		if r.Scale[i] > 0 {
			s += r.Weights[i] * (v - r.Mean[i]) / r.Scale[i]
		}
	}
	return s
}

// RerankTree is one regression tree, its nodes in one array (the root
// first): an inner node sends x to Left when x[Feature] <= Threshold,
// else to Right; a leaf (Feature < 0) answers Value.
type RerankTree struct {
	Feature   []int     `json:"f"`
	Threshold []float64 `json:"t"`
	Left      []int     `json:"l"`
	Right     []int     `json:"r"`
	Value     []float64 `json:"v"`
}

func (t *RerankTree) eval(x []float64) float64 {
	n := 0
	for t.Feature[n] >= 0 {
		if x[t.Feature[n]] <= t.Threshold[n] {
			n = t.Left[n]
		} else {
			n = t.Right[n]
		}
	}
	return t.Value[n]
}

// checkTree tells whether a tree's nodes are well formed: every inner
// node names a feature and two later nodes, so evaluation ends.
func (t *RerankTree) check(nf int) error {
	n := len(t.Feature)
	if n == 0 || len(t.Threshold) != n || len(t.Left) != n || len(t.Right) != n || len(t.Value) != n {
		return fmt.Errorf("a tree of %d nodes with arrays of other lengths", n)
	}
	for i, f := range t.Feature {
		if f < 0 {
			continue
		}
		if f >= nf || t.Left[i] <= i || t.Right[i] <= i || t.Left[i] >= n || t.Right[i] >= n {
			return fmt.Errorf("tree node %d is malformed", i)
		}
	}
	return nil
}

// ToolKey identifies a tool by the text the index embeds for it: the
// same tool registered anywhere has the same key.
func ToolKey(d *Doc) string {
	h := fnv.New64a()
	h.Write([]byte(DenseText(d)))
	return fmt.Sprintf("%016x", h.Sum64())
}

// KnownTools is a set of ToolKeys.
func KnownTools(keys []string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// ReadReranker reads a Reranker written as JSON (WriteReranker).
func ReadReranker(b []byte) (*Reranker, error) {
	var r Reranker
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("embeddings: reranker: %w", err)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("embeddings: reranker: %w", err)
	}
	return &r, nil
}

// LoadReranker reads a reranker file `airs train retrieval --reranker`
// wrote.
func LoadReranker(path string) (*Reranker, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := ReadReranker(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Marshal is the reranker as indented JSON, the committed form.
func (r *Reranker) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

//go:embed model/rerank.json
var defaultRerankerBytes []byte

var (
	defaultRerankerOnce sync.Once
	defaultReranker     *Reranker
)

// CommittedReranker is the committed reranker (embedded in the binary),
// nil when none is committed or it cannot be read by this build.
func CommittedReranker() *Reranker {
	defaultRerankerOnce.Do(func() {
		if len(bytes.TrimSpace(defaultRerankerBytes)) == 0 {
			return
		}
		r, err := ReadReranker(defaultRerankerBytes)
		if err == nil {
			defaultReranker = r
		}
	})
	return defaultReranker
}

// Reranker is the committed reranker when it was fitted over this model
// and is marked Default, else nil (RerankAdvisor).
func (m *ToolModel) Reranker() *Reranker {
	if r := CommittedReranker(); r != nil && r.Default && r.Embedder == m.ID() {
		return r
	}
	return nil
}

// fieldIndex is BM25 over one field of every document, for the
// reranker's features: the name (with its run-together words split), the
// description, the parameters' names and descriptions.
type fieldIndex struct {
	name, desc, param *BM25
	// nameTerms are each document's analysed name words (split parts
	// included); nameTokens its raw name words without stop words.
	nameTerms, nameTokens [][]string
	// strength is the trained model's Strength of each document's text
	// (nil under another embedder).
	strength []float64
	// key is each document's ToolKey.
	key []string
	// blend is the index's embedder when it is a Blend (its parts'
	// cosines and soft match are features), else nil.
	blend *Blend
	// Forward lists (BM25.forward) of the whole-text index, the groups'
	// and the three fields'.
	mainFwd, groupFwd, nameFwd, descFwd, paramFwd [][]posting
}

func buildFieldIndex(docs []Doc, vocab map[string]bool, k1, b float64) *fieldIndex {
	fi := &fieldIndex{nameTerms: make([][]string, len(docs)), nameTokens: make([][]string, len(docs)), key: make([]string, len(docs))}
	nameW, descW, paramW := make([]WeightedTerms, len(docs)), make([]WeightedTerms, len(docs)), make([]WeightedTerms, len(docs))
	for i := range docs {
		d := &docs[i]
		fi.key[i] = ToolKey(d)
		nameW[i] = docTerms(&Doc{Name: d.Name}, FieldWeights{Name: 1}, vocab)
		fi.nameTerms[i] = nameW[i].Terms
		nameW[i].Weights = nil
		for _, t := range Tokens(d.Name) {
			if !stopwords[t] {
				fi.nameTokens[i] = append(fi.nameTokens[i], t)
			}
		}
		descW[i] = WeightedTerms{Terms: Terms(d.Description)}
		var pt []string
		for _, p := range d.Params {
			pt = append(pt, Terms(p.Name)...)
			pt = append(pt, Terms(p.Description)...)
		}
		paramW[i] = WeightedTerms{Terms: pt}
	}
	fi.name = NewBM25(nameW, k1, b)
	fi.desc = NewBM25(descW, k1, b)
	fi.param = NewBM25(paramW, k1, b)
	fi.nameFwd, fi.descFwd, fi.paramFwd = fi.name.forward(), fi.desc.forward(), fi.param.forward()
	return fi
}

// termIDs are the distinct query terms' ids in ix (-1: not in the index).
func (ix *BM25) termIDs(terms []string) []int32 {
	out := make([]int32, len(terms))
	for i, t := range terms {
		id, ok := ix.terms[t]
		if !ok {
			id = -1
		}
		out[i] = id
	}
	return out
}

// forward lists each document's terms with their weighted frequencies,
// by term id (posting.doc holds the term id here): a candidate's
// frequencies are then a search in its own short list, not in postings
// as long as the registry.
func (ix *BM25) forward() [][]posting {
	fwd := make([][]posting, ix.Len())
	for id, ps := range ix.postings {
		for _, p := range ps {
			fwd[p.doc] = append(fwd[p.doc], posting{int32(id), p.tf})
		}
	}
	return fwd
}

// tfIn is term id's weighted frequency in a document's forward list (0:
// absent).
func tfIn(list []posting, id int32) float64 {
	if id < 0 {
		return 0
	}
	lo, hi := 0, len(list)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if list[m].doc < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(list) && list[lo].doc == id {
		return float64(list[lo].tf)
	}
	return 0
}

// scoreIn is document d's BM25 score for the term ids, its forward list
// given.
func (ix *BM25) scoreIn(list []posting, ids []int32, d int) float64 {
	s := 0.0
	for _, id := range ids {
		if tf := tfIn(list, id); tf > 0 {
			s += ix.idf[id] * tf * (ix.K1 + 1) / (tf + ix.norm[d])
		}
	}
	return s
}

// idfOf is a term's idf, or that of a term no document has.
func (ix *BM25) idfOf(id int32) float64 {
	if id < 0 {
		n := float64(ix.Len())
		return math.Log(1 + (n+0.5)/0.5)
	}
	return ix.idf[id]
}

// features fills the reranker's features (RerankFeatures' order) of the
// hits (the fused list, best first) for a query, into rows.
func (st *state) features(query string, hits []Hit, depth int, known map[string]bool, rows [][]float64) {
	qterms := Terms(query)
	slices.Sort(qterms)
	qterms = slices.Compact(qterms)
	qtok := map[string]bool{}
	for _, t := range Tokens(query) {
		qtok[t] = true
	}
	qset := make(map[string]bool, len(qterms))
	for _, t := range qterms {
		qset[t] = true
	}
	fi := st.fieldIndexes()
	mainIDs, nameIDs, descIDs, paramIDs := st.bm.termIDs(qterms), fi.name.termIDs(qterms), fi.desc.termIDs(qterms), fi.param.termIDs(qterms)
	var groupIDs []int32
	if st.groupBM != nil {
		groupIDs = st.groupBM.termIDs(qterms)
	}
	idfSum := 0.0
	for _, id := range mainIDs {
		idfSum += st.bm.idfOf(id)
	}
	missing := math.Log1p(float64(2 * depth))
	rank := func(r int) float64 {
		if r <= 0 {
			return missing
		}
		return math.Log1p(float64(r))
	}
	nq := float64(max(len(qterms), 1))
	var best [6]float64 // fused, dense, bm25, name, desc, param; group below
	bestGroup := 0.0
	for i, h := range hits {
		x := rows[i]
		d := st.pos[h.ID]
		x[0], x[1] = h.Fused, math.Log1p(float64(i+1))
		x[2], x[3], x[4] = h.Dense, h.Dense, rank(h.DenseRank)
		x[5], x[6] = h.BM25, rank(h.BM25Rank)
		x[7], x[8], x[9] = fi.name.scoreIn(fi.nameFwd[d], nameIDs, d), fi.desc.scoreIn(fi.descFwd[d], descIDs, d), fi.param.scoreIn(fi.paramFwd[d], paramIDs, d)
		x[10] = 0
		if g := st.groupOf[d]; g >= 0 && groupIDs != nil {
			x[10] = st.groupBM.scoreIn(fi.groupFwd[g], groupIDs, int(g))
		}
		x[11], x[12] = x[7], x[8]
		in, inDesc, idfIn := 0, 0, 0.0
		for k, id := range mainIDs {
			if tfIn(fi.mainFwd[d], id) > 0 {
				in++
				idfIn += st.bm.idfOf(id)
			}
			if tfIn(fi.descFwd[d], descIDs[k]) > 0 {
				inDesc++
			}
		}
		x[13] = float64(in) / nq
		x[14] = 0
		if idfSum > 0 {
			x[14] = idfIn / idfSum
		}
		x[15] = float64(inDesc) / nq
		nt := fi.nameTerms[d]
		hitsN := 0
		for _, t := range nt {
			if qset[t] {
				hitsN++
			}
		}
		x[16], x[17], x[18], x[19] = 0, math.Log1p(float64(hitsN)), 0, 0
		if len(nt) > 0 {
			x[16] = float64(hitsN) / float64(len(nt))
			if qset[nt[0]] {
				x[18] = 1
			}
			if qset[nt[len(nt)-1]] {
				x[19] = 1
			}
		}
		x[20] = 0
		if tk := fi.nameTokens[d]; len(tk) > 0 {
			n := 0
			for _, t := range tk {
				if qtok[t] {
					n++
				}
			}
			x[20] = float64(n) / float64(len(tk))
		}
		x[21] = math.Log1p(fi.desc.docLen[d])
		x[22] = math.Log1p(float64(len(st.docs[d].Params)))
		x[23] = h.Dense
		x[27] = 0
		if fi.strength != nil {
			x[27] = fi.strength[d]
		}
		x[30] = 0
		if known[fi.key[d]] {
			x[30] = 1
		}
		for j, v := range []float64{x[0], x[3], x[5], x[7], x[8], x[9]} {
			best[j] = max(best[j], v)
		}
		bestGroup = max(bestGroup, x[10])
	}
	rel := func(v, b float64) float64 {
		if b <= 0 {
			return 0
		}
		return v / b
	}
	for i := range hits {
		x := rows[i]
		x[0] = rel(x[0], best[0])
		x[3] = rel(x[3], best[1])
		x[5] = rel(x[5], best[2])
		x[7], x[8], x[9] = rel(x[7], best[3]), rel(x[8], best[4]), rel(x[9], best[5])
		x[10] = rel(x[10], bestGroup)
		// How sure the model is of the query (its best cosine) says how
		// far its ranking is to be trusted over the words': high for tools
		// like those it was trained on, low for tools it never saw.
		conf := best[1]
		x[23] = x[23] - conf
		x[24], x[25], x[26] = x[3]*conf, x[5]*conf, x[7]*conf
		x[28], x[29] = x[3]*x[27], x[5]*x[27]
		x[31], x[32] = x[3]*x[30], x[5]*x[30]
	}
	st.blendFeatures(fi.blend, query, hits, rows)
}

// fromEmbedder adds what the embedder knows of each document: the trained
// model's strength on its text (the model's, or a blend's model's).
func (fi *fieldIndex) fromEmbedder(emb Embedder, docs []Doc) {
	var m *ToolModel
	switch e := emb.(type) {
	case *ToolModel:
		m = e
	case *Blend:
		m, fi.blend = e.model, e
	}
	if m == nil {
		return
	}
	fi.strength = make([]float64, len(docs))
	for i := range docs {
		fi.strength[i] = m.Strength(DenseText(&docs[i]))
	}
}

// blendFeatures fill the blend's features of the hits (0 under another
// embedder): each part's cosine with the request, and the soft match's
// recall and precision, each divided by the best among the candidates.
func (st *state) blendFeatures(b *Blend, query string, hits []Hit, rows [][]float64) {
	const first = rerankFeaturesV1
	for i := range hits {
		clear(rows[i][first:])
	}
	if b == nil || len(hits) == 0 {
		return
	}
	ctx := context.Background()
	mq, err1 := b.model.Embed(ctx, []string{query})
	wq, err2 := b.words.Embed(ctx, []string{query})
	if err1 != nil || err2 != nil {
		return
	}
	mqv, wqv := unit(mq[0]), unit(wq[0])
	md, wd := b.model.Dim(), b.words.Dim()
	sm := b.soft
	if sm == nil {
		sm = b.rerankSoft()
	}
	docs := make([]int, len(hits))
	for i, h := range hits {
		docs[i] = st.pos[h.ID]
	}
	rec := sm.scores(st, query, docs)
	o := sm.opts
	o.Precision = 1
	prec := (&SoftMatch{words: sm.words, opts: o, inv: sm.inv}).scores(st, query, docs)
	var best [4]float64
	for i, d := range docs {
		v := st.vector(d)
		x := rows[i][first:]
		// The stored vector holds each part scaled by √share.
		if b.sm > 0 {
			x[0] = max(float64(dot32(mqv, v[:md]))/float64(b.sm), 0)
		}
		if b.sw > 0 {
			x[1] = max(float64(dot32(wqv, v[md:md+wd]))/float64(b.sw), 0)
		}
		x[2], x[3] = rec[i], prec[i]
		for j := range best {
			best[j] = max(best[j], x[j])
		}
	}
	for i := range docs {
		x := rows[i][first:]
		for j := range best {
			if best[j] > 0 {
				x[j] /= best[j]
			}
		}
	}
}

// rerank re-orders hits (the fused list, best first) by r's score; each
// hit's Fused becomes the logistic of its score, so that it stays a
// non-negative relevance the selector can scale by the best.
func (st *state) rerank(r *Reranker, query string, hits []Hit, o *Options) {
	if len(hits) < 2 {
		return
	}
	nf := len(RerankFeatures)
	flat := make([]float64, len(hits)*nf)
	rows := make([][]float64, len(hits))
	for i := range rows {
		rows[i] = flat[i*nf : (i+1)*nf]
	}
	st.features(query, hits, r.Depth, r.known, rows)
	for i := range hits {
		hits[i].Fused = 1 / (1 + math.Exp(-r.Score(rows[i])))
	}
	slices.SortStableFunc(hits, byFused)
}

// FinalCandidates are the first depth hits of a search before its final
// re-scoring (the parts searched and fused; no reranker, no soft match),
// with each one's reranker features: what a Final reranker learns from.
func (ix *Index) FinalCandidates(ctx context.Context, query string, depth int, known map[string]bool) ([]Hit, [][]float64, error) {
	hits, err := ix.searchRanked(ctx, query, depth, Filter{})
	if err != nil || len(hits) == 0 {
		return nil, nil, err
	}
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	for _, h := range hits {
		if _, ok := st.pos[h.ID]; !ok {
			return nil, nil, nil // synced meanwhile
		}
	}
	return hits, featureRows(st, query, hits, depth, known), nil
}

// Candidates are the fused list's first depth hits for a query with each
// one's reranker features (RerankFeatures' order; known: the tools the
// embedder was trained on, by ToolKey): what TrainReranker learns from.
// The index's own reranker and adapter are not applied.
func (ix *Index) Candidates(ctx context.Context, query string, depth int, known map[string]bool) ([]Hit, [][]float64, error) {
	hits, st, err := ix.fusedSearch(ctx, query, depth, Filter{})
	if err != nil || len(hits) == 0 {
		return nil, nil, err
	}
	return hits, featureRows(st, query, hits, depth, known), nil
}

// featureRows are hits' reranker features, one row each (RerankFeatures'
// order).
func featureRows(st *state, query string, hits []Hit, depth int, known map[string]bool) [][]float64 {
	rows := make([][]float64, len(hits))
	for i := range rows {
		rows[i] = make([]float64, len(RerankFeatures))
	}
	st.features(query, hits, depth, known, rows)
	return rows
}
