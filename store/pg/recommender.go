package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/recommender"
)

// recFeedbackLock is the advisory lock key answers are appended under
// ("recf" in ASCII), so seq order is commit order (migration 0007).
const recFeedbackLock = 0x72656366

// RecommenderStore keeps the recommender's learned state in the tables of
// migration 0007: a recommender.Store every replica shares.
type RecommenderStore struct{ db *DB }

// RecommenderStore returns the database's recommender store.
func (db *DB) RecommenderStore() *RecommenderStore { return &RecommenderStore{db: db} }

var _ recommender.Store = (*RecommenderStore)(nil)

// Where names the store in messages.
func (s *RecommenderStore) Where() string { return "PostgreSQL (airs_rec_*)" }

// AppendFeedback appends one answer and returns after its commit.
func (s *RecommenderStore) AppendFeedback(ctx context.Context, line []byte) error {
	tx, err := s.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: keeping a recommender answer: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(recFeedbackLock)); err != nil {
		return fmt.Errorf("pg: keeping a recommender answer: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO airs_rec_feedback (line) VALUES ($1)`, string(line)); err != nil {
		return fmt.Errorf("pg: keeping a recommender answer: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: keeping a recommender answer: commit: %w", err)
	}
	return nil
}

// FeedbackAfter calls fn with every answer after pos, in order.
func (s *RecommenderStore) FeedbackAfter(ctx context.Context, pos int64, fn func(line []byte)) (int64, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT seq, line FROM airs_rec_feedback WHERE seq > $1 ORDER BY seq`, pos)
	if err != nil {
		return pos, fmt.Errorf("pg: reading the recommender's answers: %w", err)
	}
	var (
		seq  int64
		line []byte
	)
	last := pos
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		fn(line)
		last = seq
		return nil
	})
	if err != nil {
		return last, fmt.Errorf("pg: reading the recommender's answers: %w", err)
	}
	return last, nil
}

// Snapshot is the newest snapshot (nil when none).
func (s *RecommenderStore) Snapshot(ctx context.Context) ([]byte, error) {
	var snap []byte
	err := s.db.pool.QueryRow(ctx, `SELECT snap FROM airs_rec_snapshot WHERE id = 1`).Scan(&snap)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pg: reading the recommender's snapshot: %w", err)
	}
	return snap, nil
}

// SaveSnapshot keeps snap unless the one kept includes more answers.
func (s *RecommenderStore) SaveSnapshot(ctx context.Context, pos int64, snap []byte) error {
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO airs_rec_snapshot (id, pos, snap) VALUES (1, $1, $2)
		ON CONFLICT (id) DO UPDATE SET pos = excluded.pos, snap = excluded.snap, saved_at = now()
		WHERE airs_rec_snapshot.pos <= excluded.pos`, pos, string(snap)); err != nil {
		return fmt.Errorf("pg: keeping the recommender's snapshot: %w", err)
	}
	return nil
}

// Tasks is every caller's task and the revision they are at.
func (s *RecommenderStore) Tasks(ctx context.Context) ([]recommender.Task, int64, error) {
	tx, err := s.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, 0, fmt.Errorf("pg: reading the tasks: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	rows, err := tx.Query(ctx, `SELECT caller, text, at, rev FROM airs_rec_tasks`)
	if err != nil {
		return nil, 0, fmt.Errorf("pg: reading the tasks: %w", err)
	}
	var (
		out []recommender.Task
		t   recommender.Task
		rev int64
		max int64
	)
	_, err = pgx.ForEachRow(rows, []any{&t.Caller, &t.Text, &t.At, &rev}, func() error {
		out = append(out, t)
		if rev > max {
			max = rev
		}
		return nil
	})
	if err != nil {
		return nil, 0, fmt.Errorf("pg: reading the tasks: %w", err)
	}
	return out, max, nil
}

// TasksRevision is the revision the tasks are at (0: none ever set).
func (s *RecommenderStore) TasksRevision(ctx context.Context) (int64, error) {
	var rev int64
	if err := s.db.pool.QueryRow(ctx, `SELECT coalesce(max(rev), 0) FROM airs_rec_tasks`).Scan(&rev); err != nil {
		return 0, fmt.Errorf("pg: reading the tasks' revision: %w", err)
	}
	return rev, nil
}

// SetTask sets (Text "": clears) one caller's task.
func (s *RecommenderStore) SetTask(ctx context.Context, t recommender.Task) error {
	if t.At.IsZero() {
		t.At = time.Now()
	}
	if _, err := s.db.pool.Exec(ctx, `INSERT INTO airs_rec_tasks (caller, text, at) VALUES ($1, $2, $3)
		ON CONFLICT (caller) DO UPDATE SET text = excluded.text, at = excluded.at, rev = nextval('airs_rec_task_rev')`,
		t.Caller, t.Text, t.At); err != nil {
		return fmt.Errorf("pg: keeping the task of %s: %w", t.Caller, err)
	}
	return nil
}
