package embeddings

import (
	"bytes"
	"context"
	"encoding/gob"
	"fmt"
	"io"

	chromem "github.com/philippgille/chromem-go"
)

// snapshot is the export format: the manifest, the lexical basis (if any)
// and chromem-go's own export of the collection.
type snapshot struct {
	Version  int
	Manifest manifest
	Lexical  []byte
	Chromem  []byte
}

// Export writes a snapshot of the whole index (vectors, documents, the
// embedder's fitted state) to w, e.g. to ship a prebuilt index.
func (ix *Index) Export(w io.Writer) error {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	s := snapshot{Version: manifestVersion, Manifest: ix.man}
	if lx, ok := fittedLexical(ix.emb); ok && lx.Fitted() {
		b, err := lx.MarshalBinary()
		if err != nil {
			return err
		}
		s.Lexical = b
	}
	var buf bytes.Buffer
	if err := ix.db.ExportToWriter(&buf, true, "", collectionName); err != nil {
		return fmt.Errorf("embeddings: export: %w", err)
	}
	s.Chromem = buf.Bytes()
	return gob.NewEncoder(w).Encode(&s)
}

// Import replaces the index's content with a snapshot written by Export.
// The snapshot must come from the same kind of embedder (its ID must match
// after the lexical basis is restored); it is persisted under Options.Dir.
func (ix *Index) Import(ctx context.Context, r io.Reader) error {
	ix.syncMu.Lock()
	defer ix.syncMu.Unlock()
	var s snapshot
	if err := gob.NewDecoder(r).Decode(&s); err != nil {
		return fmt.Errorf("embeddings: import: %w", err)
	}
	if s.Version != manifestVersion {
		return fmt.Errorf("embeddings: import: snapshot version %d, want %d", s.Version, manifestVersion)
	}
	if lx, ok := fittedLexical(ix.emb); ok && s.Lexical != nil {
		if err := lx.UnmarshalBinary(s.Lexical); err != nil {
			return fmt.Errorf("embeddings: import: %w", err)
		}
	}
	if id := ix.emb.ID(); id != s.Manifest.Embedder {
		return fmt.Errorf("embeddings: import: snapshot made with embedder %s, index uses %s", s.Manifest.Embedder, id)
	}
	tmp := chromem.NewDB()
	if err := tmp.ImportFromReader(bytes.NewReader(s.Chromem), ""); err != nil {
		return fmt.Errorf("embeddings: import: %w", err)
	}
	src := tmp.GetCollection(collectionName, noEmbed)
	if src == nil {
		return fmt.Errorf("embeddings: import: snapshot has no %q collection", collectionName)
	}
	docs, vecs, err := readCollection(ctx, src, s.Manifest.Dim)
	if err != nil {
		return err
	}
	if err := ix.db.DeleteCollection(collectionName); err != nil {
		return err
	}
	col, err := ix.db.CreateCollection(collectionName, nil, noEmbed)
	if err != nil {
		return err
	}
	ix.col = col
	if err := ix.writeDocs(ctx, docs, vecs); err != nil {
		return err
	}
	ix.man = s.Manifest
	if err := ix.saveMeta(); err != nil {
		return err
	}
	if ix.opts.Store != nil {
		m := s.Manifest
		if err := ix.saveStore(ctx, &StoreChange{Embedder: m.Embedder, Dim: m.Dim, FitDocs: m.FitDocs, Drift: m.Drift,
			Replace: true, Upsert: docs, Vecs: vecs}, true); err != nil {
			return err
		}
	}
	ix.install(docs, vecs, s.Manifest.Dim)
	return nil
}
