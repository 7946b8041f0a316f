package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/store/pg"
)

// openPGIndex opens the tool index on PostgreSQL + pgvector
// (storage.index: postgres): the vectors, the documents and the lexical
// basis live in the database every replica shares, so a tool is embedded
// once for all of them. Syncs are serialised by the store's advisory lock
// rather than index.lock, which only covers one machine.
func (e *Engine) openPGIndex(ctx context.Context, emb embeddings.Embedder) error {
	db, err := e.pgDB(ctx)
	if err != nil {
		return err
	}
	ix, err := embeddings.Open(ctx, emb, embeddings.Options{Store: db.ToolIndex()})
	if err != nil {
		return fmt.Errorf("opening the tool index on PostgreSQL (storage.dsn %s): %w", e.Config.Storage.RedactedDSN(), err)
	}
	e.Index = ix
	return e.Reindex(ctx)
}

// pgDB connects to storage.dsn once per engine and migrates its schema.
func (e *Engine) pgDB(ctx context.Context) (*pg.DB, error) {
	if e.pg != nil {
		return e.pg, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pg.Open(ctx, e.Config.Storage.DSN)
	if err != nil {
		return nil, fmt.Errorf("opening the PostgreSQL state (storage.dsn %s): %w", e.Config.Storage.RedactedDSN(), err)
	}
	e.pg = db
	return db, nil
}

// closePG closes the engine's database connections, if it opened any.
func (e *Engine) closePG() {
	if e.pg != nil {
		e.pg.Close()
		e.pg = nil
	}
}

// indexOnPG reports whether cfg puts the tool index on PostgreSQL.
func indexOnPG(cfg *config.Config) bool { return cfg.Storage.Index == config.StoragePostgres }
