package engine

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/internal/filelock"
)

// openIndex opens the tool index persisted in dir ("" = in memory only)
// and brings it up to date with the registry. Another airs process may be
// doing the same on the same AIRS_HOME (`airs serve` and `airs run`
// started together, or several CLI commands): the index's files are
// written in place, so a process reading them while another writes one
// would fail to open the index. Both steps therefore run under an
// exclusive lock on index.lock next to the index.
func (e *Engine) openIndex(ctx context.Context, emb embeddings.Embedder, dir string) error {
	if dir != "" {
		unlock, err := filelock.LockPath(filepath.Join(filepath.Dir(dir), "index.lock"))
		if err != nil {
			return fmt.Errorf("opening the tool index in %s: %w", dir, err)
		}
		defer unlock()
	}
	ix, err := embeddings.Open(ctx, emb, embeddings.Options{Dir: dir})
	if err != nil {
		return fmt.Errorf("opening the tool index in %s: %w", dir, err)
	}
	e.index = ix
	return e.Reindex(ctx)
}
