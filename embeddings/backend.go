package embeddings

import (
	"context"
	"errors"
	"fmt"
)

// Store keeps an index's documents, vectors and fitted embedder state
// somewhere other than chromem-go's files under Options.Dir — a database
// several processes share (store/pg's ToolIndex on pgvector). With
// Options.Store set the Index loads from the store on Open and on every
// Sync, and writes each Sync's changes to it; chromem-go is then kept in
// memory only (Export still works from it).
//
// The search stays this package's: BM25, the filter mask and the fusion
// are computed here over the loaded documents. A Store that also
// implements DenseSearcher computes the dense list itself (pgvector);
// otherwise the in-memory exact scan does.
type Store interface {
	// Load returns what the store holds (nil when it holds nothing yet).
	// Stored.Fit may be left nil when the store's embedder ID is have:
	// the caller already holds that state (a basis can be tens of MB).
	Load(ctx context.Context, have string) (*Stored, error)
	// Save applies one Sync's changes, all or nothing.
	Save(ctx context.Context, c *StoreChange) error
}

// Stored is a store's content: the manifest, the fitted embedder's state
// (Lexical's basis, MarshalBinary) and every document with its vector.
type Stored struct {
	Embedder string
	Dim      int
	FitDocs  int
	Drift    int
	Fit      []byte
	Docs     []Doc
	Vecs     [][]float32
}

// StoreChange is one Sync: the new manifest and fitted state, the
// documents to add or replace (with their normalised vectors) and the IDs
// to remove. Replace: drop everything first (the embedder changed).
type StoreChange struct {
	Embedder string
	Dim      int
	FitDocs  int
	Drift    int
	Fit      []byte // nil: unchanged
	Replace  bool
	Upsert   []Doc
	Vecs     [][]float32
	Remove   []string
}

// StoreLocker is a Store that can serialise Syncs across processes: Sync
// holds the lock from its reload to its Save, so two replicas syncing the
// same registry do not both refit or interleave their writes.
type StoreLocker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// DenseSearcher is a Store that ranks by dense similarity itself. The score
// must be the in-memory scan's: the cosine of the query with the (unit)
// vector plus groupWeight × the cosine with the group's centroid (the sum
// of its members' vectors, over all members, filtered or not), for
// documents with a group whose centroid is not zero.
type DenseSearcher interface {
	// DenseSearch returns the depth best documents among allowed (nil: all)
	// by that score, best first, ties by ID in byte order; and the score of
	// each document of also (the BM25 candidates), whether in the top or not.
	// embedder is the ID q was embedded under: when the store's vectors
	// were made under another (another process refitted or changed the
	// embedder since this one's last Sync), it returns ErrStaleStore.
	DenseSearch(ctx context.Context, embedder string, q []float32, groupWeight float64, depth int, allowed, also []string) ([]DenseScore, map[string]float64, error)
}

// ErrStaleStore: the store's vectors are not comparable with the query's
// (see DenseSearcher). Search then ranks from this process's own vectors,
// consistent with its own embedder, until its next Sync reloads the store.
var ErrStaleStore = errors.New("embeddings: the store's vectors were made under another embedder")

// DenseScore is one document's dense score.
type DenseScore struct {
	ID    string
	Score float64
}

// loadStore installs the store's content as the Index's manifest and
// search state, restoring the fitted embedder first; vectors made under
// another embedder are not installed (the next Sync re-embeds them).
func (ix *Index) loadStore(ctx context.Context) error {
	s, err := ix.opts.Store.Load(ctx, ix.emb.ID())
	if err != nil {
		return fmt.Errorf("embeddings: loading the index from its store: %w", err)
	}
	if s == nil {
		return nil
	}
	if lx, ok := fittedLexical(ix.emb); ok && len(s.Fit) > 0 && ix.emb.ID() != s.Embedder {
		if err := lx.UnmarshalBinary(s.Fit); err != nil {
			return fmt.Errorf("embeddings: the stored lexical basis: %w", err)
		}
	}
	ix.man = manifest{Version: manifestVersion, Embedder: s.Embedder, Dim: s.Dim, FitDocs: s.FitDocs, Drift: s.Drift}
	if s.Embedder != ix.emb.ID() {
		return nil // re-embedded on the next Sync
	}
	if len(s.Docs) != len(s.Vecs) {
		return fmt.Errorf("embeddings: the store returned %d documents and %d vectors", len(s.Docs), len(s.Vecs))
	}
	for i, v := range s.Vecs {
		if len(v) != s.Dim {
			return fmt.Errorf("embeddings: stored document %q has a vector of dimension %d, the index %d", s.Docs[i].ID, len(v), s.Dim)
		}
	}
	ix.resetMemory()
	if err := ix.writeDocs(ctx, s.Docs, s.Vecs); err != nil {
		return err
	}
	ix.install(s.Docs, s.Vecs, s.Dim)
	return nil
}

// resetMemory empties the in-memory chromem-go collection.
func (ix *Index) resetMemory() {
	_ = ix.db.DeleteCollection(collectionName)
	ix.col, _ = ix.db.CreateCollection(collectionName, nil, noEmbed)
}

// saveStore writes one Sync's changes to the store, with the fitted
// embedder's state when fit (it was refitted, or the store has another).
func (ix *Index) saveStore(ctx context.Context, c *StoreChange, fit bool) error {
	if lx, ok := fittedLexical(ix.emb); ok && fit && lx.Fitted() {
		b, err := lx.MarshalBinary()
		if err != nil {
			return err
		}
		c.Fit = b
	}
	if err := ix.opts.Store.Save(ctx, c); err != nil {
		return fmt.Errorf("embeddings: saving the index to its store: %w", err)
	}
	return nil
}

// searchStore is Search with the dense list computed by the store: the
// filter mask, BM25 and the fusion are the in-memory search's own.
func (st *state) searchStore(ctx context.Context, ds DenseSearcher, embedder string, qv []float32, qterms []string, k int, f Filter, o *Options) ([]Hit, error) {
	mask := st.allowed(&f)
	sparse, sl := st.sparseList(qterms, max(o.Depth, k), mask, o, make([]float64, len(st.docs)))
	var allowed []string
	if mask != nil {
		allowed = []string{}
		for i, ok := range mask {
			if ok {
				allowed = append(allowed, st.docs[i].ID)
			}
		}
	}
	also := make([]string, len(sl))
	for i, s := range sl {
		also[i] = st.docs[s.Doc].ID
	}
	gw := o.GroupWeight
	if st.nGroups == 0 {
		gw = 0
	}
	top, others, err := ds.DenseSearch(ctx, embedder, qv, gw, max(o.Depth, k), allowed, also)
	if errors.Is(err, ErrStaleStore) {
		return st.search(qv, qterms, k, f, o), nil
	}
	if err != nil {
		return nil, fmt.Errorf("embeddings: dense search in the store: %w", err)
	}
	dl := make([]Scored, 0, len(top))
	dense := map[int]float64{}
	for _, h := range top {
		d, ok := st.pos[h.ID]
		if !ok {
			// Written by another process after this one's last Sync: it
			// joins this process's results at its next Sync.
			continue
		}
		dl = append(dl, Scored{Doc: d, Score: h.Score})
		dense[d] = h.Score
	}
	for id, s := range others {
		if d, ok := st.pos[id]; ok {
			dense[d] = s
		}
	}
	return st.fuse(dl, sl, func(d int) float64 { return dense[d] }, sparse, k, o), nil
}
