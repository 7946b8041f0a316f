package embeddings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
	// Norm scales each list's scores in score fusion: "max" (default,
	// divided by the list's best) or "minmax" (the list's last candidate
	// maps to 0, its best to 1: a trained encoder's cosines sit in a narrow
	// band, which dividing by the best flattens).
	Norm string
	// RefitFraction: a fitted embedder (Lexical) is refitted on Sync when
	// more than this fraction of the documents was added, changed or removed
	// since the last fit (default 0.2); otherwise only changed documents are
	// re-embedded with the existing basis.
	RefitFraction float64
	// Store, when set, keeps the index in a shared store (a database)
	// instead of chromem-go's files: Dir is then ignored (see Store).
	Store Store
	// DenseInMemory makes Search scan the loaded vectors itself even when
	// Store is a DenseSearcher (the two give the same ranking; this is the
	// reference the parity tests compare against).
	DenseInMemory bool
	// Reranker re-orders the fused list's first candidates (nil: the one
	// the embedder carries, if any: RerankAdvisor); NoRerank turns
	// re-ranking off. A reranker fitted over another embedder is an error.
	Reranker *Reranker
	NoRerank bool
	// Parts configure the search of a request that states several needs
	// (zero: the defaults; Parts.Off searches every request whole).
	Parts PartsOptions
}

// FieldWeights weigh the fields of a Doc for BM25 and dense text.
type FieldWeights struct {
	Name, Description, ParamName, ParamDesc, Group, Extra float64
}

// DefaultFields are the BM25F field weights when Options.Fields is zero.
var DefaultFields = FieldWeights{Name: 2, Description: 1, ParamName: 0.5, ParamDesc: 0.3, Group: 1, Extra: 0.5}

func (o *Options) defaults() {
	if o.K1 == 0 {
		o.K1 = 1.2
	}
	if o.B == 0 {
		o.B = 0.75
	}
	if o.Fields == (FieldWeights{}) {
		o.Fields = DefaultFields
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

// adviseFusion fills the fusion weights o leaves unset with those fitted
// for the embedder.
func (o *Options) adviseFusion(f FusionWeights) {
	if o.DenseWeight == 0 && f.Dense > 0 {
		o.DenseWeight = f.Dense
	}
	if o.SparseWeight == 0 && f.Sparse > 0 {
		o.SparseWeight = f.Sparse
	}
	if o.GroupWeight == 0 && f.Group != 0 {
		o.GroupWeight = f.Group
	}
	if o.Norm == "" && f.Norm != "" {
		o.Norm = f.Norm
	}
	if o.Fields == (FieldWeights{}) && f.Name > 0 {
		o.Fields = DefaultFields
		o.Fields.Name = f.Name
	}
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

	mu      sync.RWMutex
	st      *state
	adapter *Adapter // what this installation learned from use (adapter.go)
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

// Open opens (or creates) the index under o.Dir with the embedder emb. A
// persisted index built with another embedder is re-embedded on the next
// Sync.
func Open(ctx context.Context, emb Embedder, o Options) (*Index, error) {
	if fa, ok := emb.(FusionAdvisor); ok {
		o.adviseFusion(fa.Fusion())
	}
	if pa, ok := emb.(PartsAdvisor); ok && o.Parts == (PartsOptions{}) {
		o.Parts = pa.Parts()
	}
	o.defaults()
	if o.NoRerank {
		o.Reranker = nil
	} else if o.Reranker == nil {
		if ra, ok := emb.(RerankAdvisor); ok {
			o.Reranker = ra.Reranker()
		}
	} else if err := o.Reranker.check(); err != nil {
		return nil, fmt.Errorf("embeddings: reranker: %w", err)
	} else if o.Reranker.Embedder != emb.ID() {
		return nil, fmt.Errorf("embeddings: the reranker was fitted over embedder %s, the index embeds with %s: refit it with 'airs train retrieval --reranker' or turn re-ranking off", o.Reranker.Embedder, emb.ID())
	}
	ix := &Index{emb: emb, opts: o, st: &state{pos: map[string]int{}}}
	var err error
	if o.Store != nil {
		o.Dir = ""
		ix.opts.Dir = ""
	}
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
		if lx, ok := fittedLexical(emb); ok {
			if b, err := os.ReadFile(filepath.Join(o.Dir, lexicalFile)); err == nil {
				if err := lx.UnmarshalBinary(b); err != nil {
					return nil, fmt.Errorf("embeddings: %s: %w", lexicalFile, err)
				}
			}
		}
	}
	if o.Dir != "" {
		a, err := loadAdapter(o.Dir)
		if err != nil {
			return nil, err
		}
		if a != nil && a.Embedder == emb.ID() {
			// Trained over another embedder, its corrections were for
			// another ranking: left unused until retrained.
			ix.adapter = a
		}
	}
	ix.col, err = ix.db.GetOrCreateCollection(collectionName, nil, noEmbed)
	if err != nil {
		return nil, err
	}
	if o.Store != nil {
		if err := ix.loadStore(ctx); err != nil {
			return nil, err
		}
		return ix, nil
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
	seen, err := checkIDs(docs)
	if err != nil {
		return stats, err
	}
	if ix.opts.Store != nil {
		// Diff against what the store holds now: another process may
		// have synced since this one last read it.
		unlock, err := ix.refreshFromStore(ctx)
		if err != nil {
			return stats, err
		}
		defer unlock()
	}
	ix.mu.RLock()
	old := ix.st
	ix.mu.RUnlock()

	dirty, removed := diffDocs(old, docs, seen, &stats)
	drift := ix.man.Drift + stats.Added + stats.Changed + stats.Removed
	if refitted, err := ix.refitIfDrifted(ctx, docs, drift); err != nil {
		return stats, err
	} else if refitted {
		stats.Refitted = true
		drift = 0
	}
	all := ix.man.Embedder != ix.emb.ID()
	if all {
		dirty = dirty[:0]
		for i := range docs {
			dirty = append(dirty, i)
		}
	}
	vecs, dim, err := ix.embedDirty(ctx, docs, dirty, old, &stats)
	if err != nil {
		return stats, err
	}
	if err := ix.writeCollection(ctx, docs, vecs, dirty, removed, all); err != nil {
		return stats, err
	}
	ix.man = manifest{Version: manifestVersion, Embedder: ix.emb.ID(), Dim: dim, FitDocs: ix.man.FitDocs, Drift: drift}
	if err := ix.saveMeta(); err != nil {
		return stats, err
	}
	if ix.opts.Store != nil && (len(dirty) > 0 || len(removed) > 0 || all || stats.Refitted) {
		c := &StoreChange{Embedder: ix.man.Embedder, Dim: dim, FitDocs: ix.man.FitDocs, Drift: drift,
			Replace: all, Remove: removed}
		for _, i := range dirty {
			c.Upsert = append(c.Upsert, docs[i])
			c.Vecs = append(c.Vecs, vecs[i])
		}
		if err := ix.saveStore(ctx, c, stats.Refitted || all); err != nil {
			return stats, err
		}
	}
	ix.install(docs, vecs, dim)
	return stats, nil
}

// checkIDs makes sure every document has an ID and no ID repeats; it
// returns the set of IDs.
func checkIDs(docs []Doc) (map[string]bool, error) {
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		if d.ID == "" {
			return nil, errors.New("embeddings: document without an ID")
		}
		if seen[d.ID] {
			return nil, fmt.Errorf("embeddings: duplicate document ID %q", d.ID)
		}
		seen[d.ID] = true
	}
	return seen, nil
}

// refreshFromStore takes the store's lock (when it has one) and reloads
// the index from it; the returned function releases the lock.
func (ix *Index) refreshFromStore(ctx context.Context) (func(), error) {
	unlock := func() {}
	if l, ok := ix.opts.Store.(StoreLocker); ok {
		u, err := l.Lock(ctx)
		if err != nil {
			return nil, fmt.Errorf("embeddings: locking the index's store: %w", err)
		}
		unlock = u
	}
	if err := ix.loadStore(ctx); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// diffDocs compares docs with the indexed state old: the positions in
// docs of new and changed documents (dirty) and the IDs old holds that
// docs does not (removed), counted into stats.
func diffDocs(old *state, docs []Doc, seen map[string]bool, stats *SyncStats) (dirty []int, removed []string) {
	for i := range docs {
		j, ok := old.pos[docs[i].ID]
		switch {
		case !ok:
			stats.Added++
			dirty = append(dirty, i)
		case old.hashes[j] != docs[i].Hash():
			stats.Changed++
			dirty = append(dirty, i)
		default:
			stats.Unchanged++
		}
	}
	for _, d := range old.docs {
		if !seen[d.ID] {
			removed = append(removed, d.ID)
		}
	}
	stats.Removed = len(removed)
	return dirty, removed
}

// refitIfDrifted fits a fitted embedder on docs when it has never been
// fitted or the registry drifted past Options.RefitFraction since its
// last fit; it tells whether it did.
func (ix *Index) refitIfDrifted(ctx context.Context, docs []Doc, drift int) (bool, error) {
	f, ok := ix.emb.(Fitter)
	if !ok || len(docs) == 0 {
		return false, nil
	}
	if f.Fitted() && float64(drift) <= ix.opts.RefitFraction*float64(max(ix.man.FitDocs, 1)) {
		return false, nil
	}
	texts := make([]string, len(docs))
	for i := range docs {
		texts[i] = ix.denseText(&docs[i])
	}
	if err := f.Fit(ctx, texts); err != nil {
		return false, err
	}
	ix.man.FitDocs = len(docs)
	return true, nil
}

// embedDirty embeds the dirty documents (counted in stats.Embedded) and
// returns every document's unit vector (the others' from old) and the
// vectors' dimension.
func (ix *Index) embedDirty(ctx context.Context, docs []Doc, dirty []int, old *state, stats *SyncStats) ([][]float32, int, error) {
	texts := make([]string, len(dirty))
	for k, i := range dirty {
		texts[k] = ix.denseText(&docs[i])
	}
	var fresh [][]float32
	if len(texts) > 0 {
		var err error
		fresh, err = ix.emb.Embed(ctx, texts)
		if err != nil {
			return nil, 0, err
		}
		if len(fresh) != len(texts) {
			return nil, 0, fmt.Errorf("embeddings: embedder returned %d vectors for %d texts", len(fresh), len(texts))
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
			return nil, 0, fmt.Errorf("embeddings: vector of dimension %d, embedder says %d", len(v), dim)
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
	return vecs, dim, nil
}

// writeCollection writes the change through to chromem-go: the whole
// collection anew when all, else the removed documents deleted and the
// dirty ones written.
func (ix *Index) writeCollection(ctx context.Context, docs []Doc, vecs [][]float32, dirty []int, removed []string, all bool) error {
	if all {
		if err := ix.db.DeleteCollection(collectionName); err != nil {
			return err
		}
		col, err := ix.db.CreateCollection(collectionName, nil, noEmbed)
		if err != nil {
			return err
		}
		ix.col = col
	} else if len(removed) > 0 {
		if err := ix.col.Delete(ctx, nil, nil, removed...); err != nil {
			return err
		}
	}
	if len(dirty) == 0 {
		return nil
	}
	sub := make([]Doc, len(dirty))
	subv := make([][]float32, len(dirty))
	for k, i := range dirty {
		sub[k], subv[k] = docs[i], vecs[i]
	}
	return ix.writeDocs(ctx, sub, subv)
}

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
