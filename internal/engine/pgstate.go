package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/scoring"
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

// auditOnPG reports whether cfg keeps the audit log in PostgreSQL: then
// the readers of the log's recent past (the anomaly gate's history, the
// recommender's training and a caller's recent calls) read it there.
func auditOnPG(cfg *config.Config) bool { return cfg.Storage.Audit == config.StoragePostgres }

// How many of the PostgreSQL audit log's last records the recommender
// trains on (about the file log's last historyTail bytes: records are
// ~400 bytes) and how many a caller's recent calls are picked from (about
// the file's last MiB).
const (
	historyRecords = 20000
	recentRecords  = 2500
)

// pgAuditTail is the last n records of the PostgreSQL audit log, oldest
// first; nil when it cannot be read (as a missing file log: the readers
// start empty rather than fail the command).
func (e *Engine) pgAuditTail(n int) []audit.Record {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := e.pgDB(ctx)
	if err != nil {
		return nil
	}
	recs, err := db.TailAudit(ctx, n)
	if err != nil {
		return nil
	}
	return recs
}

// PGAuditTail reads the last n records of the PostgreSQL audit log with a
// connection of its own, for readers that run before an Engine exists
// (StartAnomaly).
func PGAuditTail(cfg *config.Config, n int) ([]audit.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := pg.Open(ctx, cfg.Storage.DSN)
	if err != nil {
		return nil, fmt.Errorf("opening the PostgreSQL state (storage.dsn %s): %w", cfg.Storage.RedactedDSN(), err)
	}
	defer db.Close()
	return db.TailAudit(ctx, n)
}

// learnedOnPG reports whether cfg keeps the ranker's learned statistics
// and preferences in PostgreSQL (storage.learned: postgres).
func learnedOnPG(cfg *config.Config) bool { return cfg.Storage.Learned == config.StoragePostgres }

// pgLearned is the learned state as airs_state's "learned" document: the
// file backend's read–merge–write, under the row's lock.
type pgLearned struct{ st *pg.State }

func (p pgLearned) read() (scoring.Learned, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := p.st.Read(ctx)
	if err != nil {
		return scoring.Learned{V: scoring.LearnedVersion}, err
	}
	return parseLearned(b, "in PostgreSQL (airs_state 'learned')", "DELETE that row")
}

func (p pgLearned) update(fn func(scoring.Learned) (*scoring.Learned, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.st.Update(ctx, func(cur []byte) ([]byte, error) {
		stored, err := parseLearned(cur, "in PostgreSQL (airs_state 'learned')", "DELETE that row")
		if err != nil {
			return nil, err
		}
		next, err := fn(stored)
		if err != nil || next == nil {
			return nil, err
		}
		return json.Marshal(next)
	})
}

// openPGLearned opens the learned state in the engine's database.
func (e *Engine) openPGLearned() (*learnedStore, error) {
	db, err := e.pgDB(context.Background())
	if err != nil {
		return nil, err
	}
	return openLearnedIn(pgLearned{db.State("learned")}, e.Ranker, learnedSaveEvery)
}
