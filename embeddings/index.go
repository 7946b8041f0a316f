package embeddings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	chromem "github.com/philippgille/chromem-go"
)

// Options configure an Index. The zero value means the documented defaults.
type Options struct {
	// Dir persists the index (chromem-go's files, the manifest and the
	// lexical basis); "" keeps it in memory. AIRS uses $AIRS_HOME/index.
	Dir string
	// K1 and B are the BM25 parameters (defaults 1.2 and 0.75).
	K1, B float64
	// Fields weigh each field's terms in BM25 (BM25F-style).
	Fields FieldWeights
	// RRFK is the rank constant of reciprocal rank fusion (default 60, as in
	// Cormack, Clarke & Büttcher, SIGIR 2009).
	RRFK float64
	// DenseWeight and SparseWeight weigh the two ranked lists in the fusion
	// (defaults 1 and 1; negative: leave that list out).
	DenseWeight, SparseWeight float64
	// Depth is how many candidates of each list enter the fusion (default 100).
	Depth int
	// GroupWeight mixes a tool's group (server, API) into its score: the
	// group's own similarity to the query, times this weight, is added to
	// the tool's in both lists (default 0.3; negative disables).
	GroupWeight float64
	// Fusion is "score" (default): the weighted sum of the two lists'
	// scores, each divided by the best score of its list (CombSUM with max
	// normalisation); or "rrf": reciprocal rank fusion with RRFK. On the
	// retrieval benchmarks score fusion was ahead of RRF on every set.
	Fusion string
	// RefitFraction: a fitted embedder (Lexical) is refitted on Sync when
	// more than this fraction of the documents was added, changed or removed
	// since the last fit (default 0.2); otherwise only changed documents are
	// re-embedded with the existing basis.
	RefitFraction float64
}

// FieldWeights weigh the fields of a Doc for BM25 and dense text.
type FieldWeights struct {
	Name, Description, ParamName, ParamDesc, Group, Extra float64
}

func (o *Options) defaults() {
	if o.K1 == 0 {
		o.K1 = 1.2
	}
	if o.B == 0 {
		o.B = 0.75
	}
	if o.Fields == (FieldWeights{}) {
		o.Fields = FieldWeights{Name: 2, Description: 1, ParamName: 0.5, ParamDesc: 0.3, Group: 1, Extra: 0.5}
	}
	if o.Fusion == "" {
		o.Fusion = "score"
	}
	if o.RRFK == 0 {
		o.RRFK = 60
	}
	if o.DenseWeight == 0 {
		o.DenseWeight = 1
	}
	if o.SparseWeight == 0 {
		o.SparseWeight = 1
	}
	o.DenseWeight = max(o.DenseWeight, 0)
	o.SparseWeight = max(o.SparseWeight, 0)
	if o.Depth <= 0 {
		o.Depth = 100
	}
	if o.GroupWeight == 0 {
		o.GroupWeight = 0.3
	}
	if o.GroupWeight < 0 {
		o.GroupWeight = 0
	}
	if o.RefitFraction == 0 {
		o.RefitFraction = 0.2
	}
}

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

// SyncStats reports what a Sync did.
type SyncStats struct {
	Added, Changed, Removed, Unchanged int
	Embedded                           int  // documents sent to the embedder
	Refitted                           bool // the embedder's basis was refitted
}

// Index is the searchable set of tools: vectors in a chromem-go collection
// (persisted under Options.Dir), BM25 over the analysed fields, and an
// in-memory contiguous copy of the vectors for the exhaustive dense scan.
// Search is safe for concurrent use with Sync.
type Index struct {
	emb  Embedder
	opts Options

	syncMu sync.Mutex // serialises Sync, Import
	db     *chromem.DB
	col    *chromem.Collection
	man    manifest

	mu sync.RWMutex
	st *state
}

type manifest struct {
	Version  int    `json:"version"`
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	FitDocs  int    `json:"fit_docs"` // documents when the embedder was fitted
	Drift    int    `json:"drift"`    // documents added/changed/removed since
}

const (
	collectionName  = "tools"
	manifestFile    = "manifest.json"
	lexicalFile     = "lexical.gob"
	vectorsDir      = "vectors"
	metaDoc         = "airs.doc"
	metaHash        = "airs.hash"
	manifestVersion = 1
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
}

// Open opens (or creates) the index under o.Dir with the embedder emb. A
// persisted index built with another embedder is re-embedded on the next
// Sync.
func Open(ctx context.Context, emb Embedder, o Options) (*Index, error) {
	o.defaults()
	ix := &Index{emb: emb, opts: o, st: &state{pos: map[string]int{}}}
	var err error
	if o.Dir == "" {
		ix.db = chromem.NewDB()
	} else {
		if err := os.MkdirAll(o.Dir, 0o700); err != nil {
			return nil, err
		}
		ix.db, err = chromem.NewPersistentDB(filepath.Join(o.Dir, vectorsDir), true)
		if err != nil {
			return nil, fmt.Errorf("embeddings: open %s: %w", o.Dir, err)
		}
		if b, err := os.ReadFile(filepath.Join(o.Dir, manifestFile)); err == nil {
			if err := json.Unmarshal(b, &ix.man); err != nil {
				return nil, fmt.Errorf("embeddings: %s: %w", manifestFile, err)
			}
		}
		if lx, ok := emb.(*Lexical); ok {
			if b, err := os.ReadFile(filepath.Join(o.Dir, lexicalFile)); err == nil {
				if err := lx.UnmarshalBinary(b); err != nil {
					return nil, fmt.Errorf("embeddings: %s: %w", lexicalFile, err)
				}
			}
		}
	}
	ix.col, err = ix.db.GetOrCreateCollection(collectionName, nil, noEmbed)
	if err != nil {
		return nil, err
	}
	if ix.man.Embedder != "" && ix.man.Embedder == emb.ID() {
		docs, vecs, err := readCollection(ctx, ix.col, ix.man.Dim)
		if err != nil {
			return nil, err
		}
		ix.install(docs, vecs, ix.man.Dim)
	}
	return ix, nil
}

// noEmbed is the collection's embedding function: the Index always passes
// vectors, so chromem-go must never embed by itself.
func noEmbed(context.Context, string) ([]float32, error) {
	return nil, errors.New("embeddings: chromem-go asked to embed; the index supplies vectors")
}

// readCollection lists every document of the collection with its vector
// (an exhaustive query returns them all).
func readCollection(ctx context.Context, col *chromem.Collection, dim int) ([]Doc, [][]float32, error) {
	n := col.Count()
	if n == 0 || dim <= 0 {
		return nil, nil, nil
	}
	probe := make([]float32, dim)
	probe[0] = 1
	res, err := col.QueryEmbedding(ctx, probe, n, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("embeddings: read index: %w", err)
	}
	docs := make([]Doc, 0, len(res))
	vecs := make([][]float32, 0, len(res))
	for _, r := range res {
		var d Doc
		if err := json.Unmarshal([]byte(r.Metadata[metaDoc]), &d); err != nil {
			return nil, nil, fmt.Errorf("embeddings: read index: document %q: %w", r.ID, err)
		}
		if len(r.Embedding) != dim {
			continue // written under another dimension: re-embedded on Sync
		}
		docs = append(docs, d)
		vecs = append(vecs, r.Embedding)
	}
	return docs, vecs, nil
}

// Len is the number of indexed documents.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.st.docs)
}

// Doc returns the indexed document with the given id.
func (ix *Index) Doc(id string) (Doc, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	i, ok := ix.st.pos[id]
	if !ok {
		return Doc{}, false
	}
	return ix.st.docs[i], true
}

// Embedder is the index's embedder.
func (ix *Index) Embedder() Embedder { return ix.emb }

// Sync makes the index hold exactly docs: new and changed documents (by
// content hash) are embedded, removed ones deleted, unchanged ones kept. A
// fitted embedder is (re)fitted when it has never been or when the registry
// drifted past Options.RefitFraction; then every document is re-embedded.
func (ix *Index) Sync(ctx context.Context, docs []Doc) (SyncStats, error) {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	var stats SyncStats
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		if d.ID == "" {
			return stats, errors.New("embeddings: document without an ID")
		}
		if seen[d.ID] {
			return stats, fmt.Errorf("embeddings: duplicate document ID %q", d.ID)
		}
		seen[d.ID] = true
	}
	ix.mu.RLock()
	old := ix.st
	ix.mu.RUnlock()

	hashes := make([]string, len(docs))
	var dirty []int
	for i := range docs {
		hashes[i] = docs[i].Hash()
		j, ok := old.pos[docs[i].ID]
		switch {
		case !ok:
			stats.Added++
			dirty = append(dirty, i)
		case old.hashes[j] != hashes[i]:
			stats.Changed++
			dirty = append(dirty, i)
		default:
			stats.Unchanged++
		}
	}
	var removed []string
	for _, d := range old.docs {
		if !seen[d.ID] {
			removed = append(removed, d.ID)
		}
	}
	stats.Removed = len(removed)
	drift := ix.man.Drift + stats.Added + stats.Changed + stats.Removed

	all := false
	if f, ok := ix.emb.(Fitter); ok && len(docs) > 0 {
		if !f.Fitted() || float64(drift) > ix.opts.RefitFraction*float64(max(ix.man.FitDocs, 1)) {
			texts := make([]string, len(docs))
			for i := range docs {
				texts[i] = ix.denseText(&docs[i])
			}
			if err := f.Fit(ctx, texts); err != nil {
				return stats, err
			}
			stats.Refitted = true
			ix.man.FitDocs = len(docs)
			drift = 0
		}
	}
	if ix.man.Embedder != ix.emb.ID() {
		all = true
	}
	if all {
		dirty = dirty[:0]
		for i := range docs {
			dirty = append(dirty, i)
		}
	}
	// Embed the dirty documents.
	texts := make([]string, len(dirty))
	for k, i := range dirty {
		texts[k] = ix.denseText(&docs[i])
	}
	var fresh [][]float32
	if len(texts) > 0 {
		var err error
		fresh, err = ix.emb.Embed(ctx, texts)
		if err != nil {
			return stats, err
		}
		if len(fresh) != len(texts) {
			return stats, fmt.Errorf("embeddings: embedder returned %d vectors for %d texts", len(fresh), len(texts))
		}
	}
	stats.Embedded = len(texts)
	dim := ix.emb.Dim()
	if len(fresh) == 0 && old.dim > 0 {
		// Nothing was embedded: an embedder that learns its dimension from
		// its first answer (Ollama) does not know it yet after a reopen,
		// and the stored vectors keep theirs.
		dim = old.dim
	}
	for _, v := range fresh {
		if len(v) != dim {
			return stats, fmt.Errorf("embeddings: vector of dimension %d, embedder says %d", len(v), dim)
		}
	}
	vecs := make([][]float32, len(docs))
	for k, i := range dirty {
		vecs[i] = normalize32(fresh[k])
	}
	for i := range docs {
		if vecs[i] == nil {
			vecs[i] = old.vector(old.pos[docs[i].ID])
		}
	}

	// Write through to chromem-go.
	if all {
		if err := ix.db.DeleteCollection(collectionName); err != nil {
			return stats, err
		}
		col, err := ix.db.CreateCollection(collectionName, nil, noEmbed)
		if err != nil {
			return stats, err
		}
		ix.col = col
	} else if len(removed) > 0 {
		if err := ix.col.Delete(ctx, nil, nil, removed...); err != nil {
			return stats, err
		}
	}
	if len(dirty) > 0 {
		sub := make([]Doc, len(dirty))
		subv := make([][]float32, len(dirty))
		for k, i := range dirty {
			sub[k], subv[k] = docs[i], vecs[i]
		}
		if err := ix.writeDocs(ctx, sub, subv); err != nil {
			return stats, err
		}
	}
	ix.man = manifest{Version: manifestVersion, Embedder: ix.emb.ID(), Dim: dim, FitDocs: ix.man.FitDocs, Drift: drift}
	if err := ix.saveMeta(); err != nil {
		return stats, err
	}
	ix.install(docs, vecs, dim)
	return stats, nil
}

// writeDocs adds (or replaces) documents in the chromem-go collection.
func (ix *Index) writeDocs(ctx context.Context, docs []Doc, vecs [][]float32) error {
	if len(docs) == 0 {
		return nil
	}
	cdocs := make([]chromem.Document, len(docs))
	for i := range docs {
		b, err := json.Marshal(&docs[i])
		if err != nil {
			return err
		}
		cdocs[i] = chromem.Document{
			ID:        docs[i].ID,
			Metadata:  map[string]string{metaDoc: string(b), metaHash: docs[i].Hash()},
			Embedding: vecs[i],
			Content:   docs[i].Text(),
		}
	}
	return ix.col.AddDocuments(ctx, cdocs, 4)
}

func (st *state) vector(i int) []float32 { return st.vecs[i*st.dim : (i+1)*st.dim] }

func normalize32(v []float32) []float32 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	inv := 1 / math.Sqrt(s)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// saveMeta writes the manifest and the lexical basis (atomically: temp file
// and rename).
func (ix *Index) saveMeta() error {
	if ix.opts.Dir == "" {
		return nil
	}
	if lx, ok := ix.emb.(*Lexical); ok && lx.Fitted() {
		b, err := lx.MarshalBinary()
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(ix.opts.Dir, lexicalFile), b); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(ix.man, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(ix.opts.Dir, manifestFile), b)
}

func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// denseText is the text a document is embedded from: the name's words come
// first and twice, as a name says more about a tool than any other phrase.
// It depends on the document alone, so the content hash decides re-embedding.
func (ix *Index) denseText(d *Doc) string {
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
	for k, i := range order {
		st.docs[k] = docs[i]
		st.hashes[k] = docs[i].Hash()
		st.pos[docs[i].ID] = k
		copy(st.vecs[k*dim:], vecs[i])
	}
	fw := ix.opts.Fields
	vocab := registryVocab(st.docs)
	wt := make([]WeightedTerms, len(st.docs))
	for i := range st.docs {
		wt[i] = docTerms(&st.docs[i], fw, vocab)
	}
	st.bm = NewBM25(wt, ix.opts.K1, ix.opts.B)

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
	ix.mu.Lock()
	ix.st = st
	ix.mu.Unlock()
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

// allowed computes the filter's mask over st (nil: everything passes).
func (st *state) allowed(f *Filter) []bool {
	if f.empty() {
		return nil
	}
	mask := make([]bool, len(st.docs))
	var ids map[string]bool
	if f.IDs != nil {
		ids = make(map[string]bool, len(f.IDs))
		for _, id := range f.IDs {
			ids[id] = true
		}
	}
	var held map[string]bool
	if f.CheckCapabilities {
		held = make(map[string]bool, len(f.Capabilities))
		for _, c := range f.Capabilities {
			held[c] = true
		}
	}
outer:
	for i := range st.docs {
		d := &st.docs[i]
		if d.Trust < f.MinTrust {
			continue
		}
		if ids != nil && !ids[d.ID] {
			continue
		}
		for k, v := range f.Where {
			if d.Metadata[k] != v {
				continue outer
			}
		}
		if held != nil {
			for _, c := range d.Capabilities {
				if !held[c] && !held[wildcard(c)] {
					continue outer
				}
			}
		}
		mask[i] = true
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
// rankings of the documents passing f, fused by reciprocal rank fusion.
// Ties break by ID.
func (ix *Index) Search(ctx context.Context, query string, k int, f Filter) ([]Hit, error) {
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	if k <= 0 || len(st.docs) == 0 {
		return nil, nil
	}
	qv, err := ix.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 || len(qv[0]) != st.dim {
		return nil, fmt.Errorf("embeddings: query vector of dimension %d, index has %d", len(qv[0]), st.dim)
	}
	return st.search(qv[0], Terms(query), k, f, &ix.opts), nil
}

func (st *state) search(qv []float32, qterms []string, k int, f Filter, o *Options) []Hit {
	n := len(st.docs)
	mask := st.allowed(&f)
	keep := func(i int) bool { return mask == nil || mask[i] }

	dense := make([]float64, n)
	st.dots(qv, dense)
	if st.nGroups > 0 && o.GroupWeight > 0 {
		gsum := make([]float64, st.nGroups)
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
	sparse := make([]float64, n)
	st.bm.Scores(qterms, mask, sparse)
	if st.nGroups > 0 && o.GroupWeight > 0 {
		gs := make([]float64, st.nGroups)
		st.groupBM.Scores(qterms, nil, gs)
		for i := 0; i < n; i++ {
			if g := st.groupOf[i]; g >= 0 && keep(i) {
				sparse[i] += o.GroupWeight * gs[g]
			}
		}
	}
	depth := max(o.Depth, k)
	dl := TopK(dense, depth, keep)
	sl := TopK(sparse, depth, func(i int) bool { return keep(i) && sparse[i] > 0 })
	fused := map[int]*Hit{}
	get := func(d int) *Hit {
		h, ok := fused[d]
		if !ok {
			h = &Hit{ID: st.docs[d].ID, Dense: dense[d], BM25: sparse[d]}
			fused[d] = h
		}
		return h
	}
	var dmax, smax float64
	if len(dl) > 0 {
		dmax = dl[0].Score
	}
	if len(sl) > 0 {
		smax = sl[0].Score
	}
	for r, s := range dl {
		h := get(s.Doc)
		h.DenseRank = r + 1
		if o.Fusion != "rrf" {
			if dmax > 0 {
				h.Fused += o.DenseWeight * s.Score / dmax
			}
		} else {
			h.Fused += o.DenseWeight / (o.RRFK + float64(r+1))
		}
	}
	for r, s := range sl {
		h := get(s.Doc)
		h.BM25Rank = r + 1
		if o.Fusion != "rrf" {
			h.Fused += o.SparseWeight * s.Score / smax
		} else {
			h.Fused += o.SparseWeight / (o.RRFK + float64(r+1))
		}
	}
	hits := make([]Hit, 0, len(fused))
	for _, h := range fused {
		hits = append(hits, *h)
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].Fused != hits[b].Fused {
			return hits[a].Fused > hits[b].Fused
		}
		return hits[a].ID < hits[b].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// parallelDots is the registry size from which the dense scan is split
// across GOMAXPROCS goroutines.
const parallelDots = 4096

// dots computes q·v for every document (filtered ones too: group centroids
// include them; the filter applies when the lists are cut).
func (st *state) dots(q []float32, out []float64) {
	n := len(st.docs)
	scan := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = float64(dot32(q, st.vecs[i*st.dim:(i+1)*st.dim]))
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

// dot32 is the dot product of equal-length vectors, eight lanes at a time.
func dot32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		aa, bb := a[i:i+8:i+8], b[i:i+8:i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
