package pg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/guard"
)

// GuardStore is the guard's review store as airs_guard_state's "reviews"
// document (migration 0008): a guard.StateStore the replicas share.
type GuardStore struct{ db *DB }

// GuardStore returns the database's guard store.
func (db *DB) GuardStore() *GuardStore { return &GuardStore{db: db} }

var _ guard.StateStore = (*GuardStore)(nil)

// Where names the store in messages.
func (s *GuardStore) Where() string { return "PostgreSQL airs_guard_state 'reviews'" }

// Update is read-change-write under the document's row lock, committed
// before it returns.
func (s *GuardStore) Update(ctx context.Context, fn func(cur []byte) ([]byte, error)) error {
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	// The row must exist to be locked: the first writer creates it empty.
	if _, err := tx.Exec(ctx, `INSERT INTO airs_guard_state (name) VALUES ('reviews') ON CONFLICT (name) DO NOTHING`); err != nil {
		return fmt.Errorf("pg: %w", err)
	}
	var cur *string
	if err := tx.QueryRow(ctx, `SELECT doc FROM airs_guard_state WHERE name = 'reviews' FOR UPDATE`).Scan(&cur); err != nil {
		return fmt.Errorf("pg: %w", err)
	}
	var in []byte
	if cur != nil {
		in = []byte(*cur)
	}
	next, err := fn(in)
	if err != nil {
		return err
	}
	if next == nil {
		return nil // nothing changed: the rollback only releases the lock
	}
	if _, err := tx.Exec(ctx, `UPDATE airs_guard_state SET doc = $1, updated_at = now() WHERE name = 'reviews'`, string(next)); err != nil {
		return fmt.Errorf("pg: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: commit: %w", err)
	}
	return nil
}

// AnomalyModels keeps the anomaly models by slot (migration 0008): a
// guard.ModelStore.
type AnomalyModels struct{ db *DB }

// AnomalyModels returns the database's model store.
func (db *DB) AnomalyModels() *AnomalyModels { return &AnomalyModels{db: db} }

var _ guard.ModelStore = (*AnomalyModels)(nil)

// Where names the store in messages.
func (m *AnomalyModels) Where() string { return "PostgreSQL airs_anomaly_models" }

// SaveModel keeps model as slot's.
func (m *AnomalyModels) SaveModel(ctx context.Context, slot, version string, model []byte) error {
	if _, err := m.db.pool.Exec(ctx, `INSERT INTO airs_anomaly_models (slot, version, model) VALUES ($1, $2, $3)
		ON CONFLICT (slot) DO UPDATE SET version = excluded.version, model = excluded.model, trained_at = now()`,
		slot, version, string(model)); err != nil {
		return fmt.Errorf("pg: keeping the anomaly %s: %w", slot, err)
	}
	return nil
}

// LoadModel is slot's model (an error wrapping fs.ErrNotExist when none).
func (m *AnomalyModels) LoadModel(ctx context.Context, slot string) (string, []byte, error) {
	var version string
	var model []byte
	err := m.db.pool.QueryRow(ctx, `SELECT version, model FROM airs_anomaly_models WHERE slot = $1`, slot).Scan(&version, &model)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, fmt.Errorf("no anomaly %s in %s: %w", slot, m.Where(), fs.ErrNotExist)
	}
	if err != nil {
		return "", nil, fmt.Errorf("pg: reading the anomaly %s: %w", slot, err)
	}
	return version, model, nil
}

// ModelVersion is slot's model's version ("" when none).
func (m *AnomalyModels) ModelVersion(ctx context.Context, slot string) (string, error) {
	var version string
	err := m.db.pool.QueryRow(ctx, `SELECT version FROM airs_anomaly_models WHERE slot = $1`, slot).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("pg: reading the anomaly %s's version: %w", slot, err)
	}
	return version, nil
}
