package pg

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// State is a named JSON document in airs_state (migration 0004) that
// replicas share: the ranker's learned statistics and preferences are one.
// Update is read-modify-write under the row's lock, so two replicas
// merging at once take turns and neither overwrites the other.
type State struct {
	db   *DB
	name string
}

// State returns the named state document.
func (db *DB) State(name string) *State { return &State{db: db, name: name} }

// Read returns the document, nil when there is none yet.
func (s *State) Read(ctx context.Context) ([]byte, error) {
	var doc []byte
	err := s.db.pool.QueryRow(ctx, `SELECT doc::text FROM airs_state WHERE name = $1`, s.name).Scan(&doc)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pg: reading the %s state: %w", s.name, err)
	}
	return doc, nil
}

// Update calls fn with the current document (nil when none) while holding
// its row lock and stores what fn returns; fn returning nil stores nothing.
// fn's error aborts the update and is returned as is.
func (s *State) Update(ctx context.Context, fn func(cur []byte) ([]byte, error)) error {
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: updating the %s state: %w", s.name, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	// The row must exist to be locked: the first writer creates it empty.
	if _, err := tx.Exec(ctx, `INSERT INTO airs_state (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, s.name); err != nil {
		return fmt.Errorf("pg: updating the %s state: %w", s.name, err)
	}
	var cur []byte
	if err := tx.QueryRow(ctx, `SELECT doc::text FROM airs_state WHERE name = $1 FOR UPDATE`, s.name).Scan(&cur); err != nil {
		return fmt.Errorf("pg: updating the %s state: %w", s.name, err)
	}
	next, err := fn(cur)
	if err != nil {
		return err
	}
	if next == nil {
		return nil
	}
	if _, err := tx.Exec(ctx, `UPDATE airs_state SET doc = $2::text::jsonb, updated_at = now() WHERE name = $1`, s.name, string(next)); err != nil {
		return fmt.Errorf("pg: updating the %s state: %w", s.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: updating the %s state: commit: %w", s.name, err)
	}
	return nil
}
