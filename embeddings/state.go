package embeddings

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// state is an immutable snapshot of what Search reads.
type state struct {
	docs   []Doc
	hashes []string
	pos    map[string]int
	dim    int
	vecs   []float32 // len(docs) × dim
	bm     *BM25
	// groups
	groupOf []int32 // doc → group, -1 none
	groupBM *BM25
	// groupNorm is |Σ member vectors| per group: the centroid's cosine
	// with q is Σ(q·v)/groupNorm, so it comes from the members' dot products.
	groupNorm []float64
	nGroups   int
	// What a Filter reads of each document, kept apart from docs so that
	// filtering scans small arrays, not whole documents: the trust level,
	// the required capabilities and each one as Kind(*).
	trust    []int32
	caps     [][]int32 // indexes into capNames
	capNames []string  // the distinct capabilities required
	// fields are the per-field indexes the reranker's features read,
	// built by fieldsOnce on first use (eagerly when the index re-ranks).
	fields      *fieldIndex
	fieldsOnce  sync.Once
	buildFields func() *fieldIndex
	// soft are the documents' words a SoftMatch reads, built on first use.
	soft softDocs
	// bias is subtracted from each document's dense score (DocBiaser),
	// nil: none.
	bias []float32
}

// fieldIndexes are st's per-field indexes, built on first use.
func (st *state) fieldIndexes() *fieldIndex {
	st.fieldsOnce.Do(func() {
		if st.buildFields == nil {
			st.fields = buildFieldIndex(nil, nil, 1.2, 0.75)
			return
		}
		st.fields = st.buildFields()
	})
	return st.fields
}

func (st *state) vector(i int) []float32 { return st.vecs[i*st.dim : (i+1)*st.dim] }

// denseText is the text a document is embedded from: the name's words come
// first and twice, as a name says more about a tool than any other phrase.
// It depends on the document alone, so the content hash decides re-embedding.
func (ix *Index) denseText(d *Doc) string { return DenseText(d) }

// DenseText is the text an Index embeds for a document: the name's words,
// then Doc.Text. A model trained for the index is trained on this text.
func DenseText(d *Doc) string {
	name := strings.Join(Tokens(d.Name), " ")
	return name + ". " + d.Text()
}

// install builds the in-memory search state (sorted by ID) and swaps it in.
func (ix *Index) install(docs []Doc, vecs [][]float32, dim int) {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return docs[order[a]].ID < docs[order[b]].ID })
	st := &state{
		docs:   make([]Doc, len(docs)),
		hashes: make([]string, len(docs)),
		pos:    make(map[string]int, len(docs)),
		dim:    dim,
		vecs:   make([]float32, len(docs)*dim),
	}
	st.trust = make([]int32, len(docs))
	st.caps = make([][]int32, len(docs))
	capID := map[string]int32{}
	for k, i := range order {
		st.docs[k] = docs[i]
		st.hashes[k] = docs[i].Hash()
		st.pos[docs[i].ID] = k
		copy(st.vecs[k*dim:], vecs[i])
		st.trust[k] = int32(docs[i].Trust)
		for _, c := range docs[i].Capabilities {
			id, ok := capID[c]
			if !ok {
				id = int32(len(st.capNames))
				capID[c] = id
				st.capNames = append(st.capNames, c)
			}
			st.caps[k] = append(st.caps[k], id)
		}
	}
	if db, ok := ix.emb.(DocBiaser); ok && len(st.docs) > 0 {
		ix.mu.Lock()
		old := ix.st
		ix.mu.Unlock()
		st.bias = docBias(db, old, st)
	}
	fw := ix.opts.Fields
	vocab := registryVocab(st.docs)
	wt := make([]WeightedTerms, len(st.docs))
	for i := range st.docs {
		wt[i] = docTerms(&st.docs[i], fw, vocab)
	}
	st.bm = NewBM25(wt, ix.opts.K1, ix.opts.B)
	k1, b, emb := ix.opts.K1, ix.opts.B, ix.emb
	st.buildFields = func() *fieldIndex {
		fi := buildFieldIndex(st.docs, vocab, k1, b)
		fi.mainFwd = st.bm.forward()
		if st.groupBM != nil {
			fi.groupFwd = st.groupBM.forward()
		}
		fi.fromEmbedder(emb, st.docs)
		return fi
	}

	// Groups: a BM25 document and a centroid per group.
	st.groupOf = make([]int32, len(st.docs))
	gidx := map[string]int32{}
	var gterms []WeightedTerms
	for i := range st.docs {
		g := st.docs[i].Group
		if g == "" {
			st.groupOf[i] = -1
			continue
		}
		id, ok := gidx[g]
		if !ok {
			id = int32(len(gterms))
			gidx[g] = id
			gterms = append(gterms, WeightedTerms{})
		}
		st.groupOf[i] = id
		t := wt[i]
		gterms[id].Terms = append(gterms[id].Terms, t.Terms...)
		gterms[id].Weights = append(gterms[id].Weights, t.Weights...)
	}
	st.nGroups = len(gterms)
	if st.nGroups > 0 {
		st.groupBM = NewBM25(gterms, ix.opts.K1, ix.opts.B)
		acc := make([]float64, st.nGroups*dim)
		for i := range st.docs {
			g := st.groupOf[i]
			if g < 0 {
				continue
			}
			v := st.vector(i)
			for j := range v {
				acc[int(g)*dim+j] += float64(v[j])
			}
		}
		st.groupNorm = make([]float64, st.nGroups)
		for g := 0; g < st.nGroups; g++ {
			n := 0.0
			for _, v := range acc[g*dim : (g+1)*dim] {
				n += v * v
			}
			st.groupNorm[g] = math.Sqrt(n)
		}
	}
	if ix.opts.Reranker != nil {
		st.fieldIndexes() // built now rather than by the first search
	}
	ix.mu.Lock()
	ix.st = st
	ix.mu.Unlock()
}

// docBias is db's correction of every document of st, computed for the
// documents old does not hold as they are (a registration adds one tool:
// one tool's correction is computed). A correction that fails is none:
// the index ranks by the plain cosine.
func docBias(db DocBiaser, old, st *state) []float32 {
	out := make([]float32, len(st.docs))
	var fresh []int
	for i, h := range st.hashes {
		if old != nil && old.bias != nil && old.dim == st.dim {
			if j, ok := old.pos[st.docs[i].ID]; ok && old.hashes[j] == h {
				out[i] = old.bias[j]
				continue
			}
		}
		fresh = append(fresh, i)
	}
	if len(fresh) == 0 {
		return out
	}
	rows := st.vecs
	if len(fresh) < len(st.docs) {
		rows = make([]float32, 0, len(fresh)*st.dim)
		for _, i := range fresh {
			rows = append(rows, st.vector(i)...)
		}
	}
	b, err := db.DocBias(context.Background(), rows, st.dim)
	if err != nil || b == nil {
		return nil
	}
	for k, i := range fresh {
		out[i] = b[k]
	}
	return out
}

// registryVocab is the set of words (three letters or more) the registry
// uses in descriptions and parameter names: the dictionary for splitting
// run-together tool names.
func registryVocab(docs []Doc) map[string]bool {
	v := map[string]bool{}
	add := func(s string) {
		for _, t := range Tokens(s) {
			if len(t) >= 3 && !stopwords[t] {
				v[t] = true
			}
		}
	}
	for i := range docs {
		add(docs[i].Description)
		for _, p := range docs[i].Params {
			add(p.Name)
		}
	}
	return v
}

// splitName breaks a run-together name word ("diceroller",
// "keywordexplorer") into the fewest registry words of three letters or
// more; nil when the word is itself a registry word or has no such split.
func splitName(w string, vocab map[string]bool) []string {
	n := len(w)
	if n < 6 || vocab[w] {
		return nil
	}
	best := make([]int, n+1) // fewest pieces for w[:i], -1 impossible
	from := make([]int, n+1)
	for i := 1; i <= n; i++ {
		best[i] = -1
		for j := max(0, i-20); j <= i-3; j++ {
			if best[j] >= 0 && vocab[w[j:i]] && (best[i] < 0 || best[j]+1 < best[i]) {
				best[i], from[i] = best[j]+1, j
			}
		}
	}
	if best[n] < 2 {
		return nil
	}
	var parts []string
	for i := n; i > 0; i = from[i] {
		parts = append(parts, w[from[i]:i])
	}
	slices.Reverse(parts)
	return parts
}

// docTerms analyses a document's fields with their weights; run-together
// name words also count as their parts.
func docTerms(d *Doc, fw FieldWeights, vocab map[string]bool) WeightedTerms {
	var wt WeightedTerms
	add := func(text string, w float64) {
		if w <= 0 || text == "" {
			return
		}
		for _, t := range Terms(text) {
			wt.Terms = append(wt.Terms, t)
			wt.Weights = append(wt.Weights, float32(w))
		}
	}
	add(d.Name, fw.Name)
	if vocab != nil && fw.Name > 0 {
		for _, t := range Tokens(d.Name) {
			for _, p := range splitName(t, vocab) {
				if !stopwords[p] {
					wt.Terms = append(wt.Terms, Stem(p))
					wt.Weights = append(wt.Weights, float32(fw.Name))
				}
			}
		}
	}
	add(d.Description, fw.Description)
	for _, p := range d.Params {
		add(p.Name, fw.ParamName)
		add(p.Description, fw.ParamDesc)
	}
	add(d.Group, fw.Group)
	add(d.Extra, fw.Extra)
	return wt
}
