package embeddings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	chromem "github.com/philippgille/chromem-go"

	"github.com/airs-dev/airs/internal/atomicfile"
)

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

// saveMeta writes the manifest and the lexical basis (atomically: temp file
// and rename).
func (ix *Index) saveMeta() error {
	if ix.opts.Dir == "" {
		return nil
	}
	if lx, ok := fittedLexical(ix.emb); ok && lx.Fitted() {
		b, err := lx.MarshalBinary()
		if err != nil {
			return err
		}
		if err := atomicfile.Write(filepath.Join(ix.opts.Dir, lexicalFile), b); err != nil {
			return err
		}
	}
	b, err := json.MarshalIndent(ix.man, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(ix.opts.Dir, manifestFile), b)
}
