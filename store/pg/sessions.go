package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/session"
)

// sessionsLock is the advisory lock key appends to airs_sessions take
// ("sess" in ASCII), so that seq order is commit order (migration 0006).
const sessionsLock = 0x73657373

// SessionLog is the recorded-session log in airs_sessions (migration
// 0006): a session.Sink for session.OpenSink, shared by every replica.
type SessionLog struct{ db *DB }

// SessionLog returns the database's session log.
func (db *DB) SessionLog() *SessionLog { return &SessionLog{db: db} }

var _ session.Sink = (*SessionLog)(nil)

// Append inserts the batch in one transaction and returns after its
// commit, so a record the Recorder acknowledges is committed.
func (l *SessionLog) Append(ctx context.Context, batch []session.Entry) error {
	if len(batch) == 0 {
		return nil
	}
	n := len(batch)
	ids, kinds := make([]string, n), make([]string, n)
	refs, sessions, channels, callers := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	ats, lines := make([]time.Time, n), make([]string, n)
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for i, e := range batch {
		ids[i], kinds[i], ats[i], lines[i] = e.ID, e.Kind, e.Time, string(e.Line)
		refs[i], sessions[i], channels[i], callers[i] = opt(e.Ref), opt(e.Session), opt(e.Channel), opt(e.Caller)
	}
	tx, err := l.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: appending to the session log: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	// Held to the commit: seq values are taken, and become visible, in
	// one order (see the migration). Batches are rare next to audit
	// appends (one per turn, group-committed), so the lock costs little.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(sessionsLock)); err != nil {
		return fmt.Errorf("pg: appending to the session log: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO airs_sessions (id, kind, ref, session, channel, caller, at, line)
		SELECT id, kind, ref, session, channel, caller, at, line FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::text[])
		WITH ORDINALITY AS b(id, kind, ref, session, channel, caller, at, line, ord) ORDER BY ord`,
		ids, kinds, refs, sessions, channels, callers, ats, lines); err != nil {
		return fmt.Errorf("pg: appending to the session log: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: appending to the session log: commit: %w", err)
	}
	return nil
}

// Read calls fn with every record after seq after (0: from the start), in
// log order, with its seq, as session.Reader reads the file; it returns the
// last seq read, for a later Read to continue from. A row that is not a
// record of a version this binary reads is an error naming its seq.
func (l *SessionLog) Read(ctx context.Context, after int64, fn func(seq int64, r session.Record) error) (int64, error) {
	rows, err := l.db.pool.Query(ctx, `SELECT seq, line FROM airs_sessions WHERE seq > $1 ORDER BY seq`, after)
	if err != nil {
		return after, fmt.Errorf("pg: reading the session log: %w", err)
	}
	var (
		seq  int64
		line []byte
	)
	last := after
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		rec, err := session.DecodeLine(line)
		if err != nil {
			return fmt.Errorf("airs_sessions seq %d: %w", seq, err)
		}
		last = seq
		return fn(seq, rec)
	})
	if err != nil {
		return last, fmt.Errorf("pg: reading the session log: %w", err)
	}
	return last, nil
}

// ReadAll is every record, in log order (what session.ReadFile returns for
// a file: Merge and replay take it as is).
func (l *SessionLog) ReadAll(ctx context.Context) ([]session.Record, error) {
	var out []session.Record
	_, err := l.Read(ctx, 0, func(_ int64, r session.Record) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// Count is how many records the log holds.
func (l *SessionLog) Count(ctx context.Context) (int64, error) {
	var n int64
	if err := l.db.pool.QueryRow(ctx, `SELECT count(*) FROM airs_sessions`).Scan(&n); err != nil {
		return 0, fmt.Errorf("pg: counting the session log: %w", err)
	}
	return n, nil
}

// Tail is the last n records, oldest first (the recommender trains on the
// recent past, as on the file log's last bytes).
func (l *SessionLog) Tail(ctx context.Context, n int) ([]session.Record, error) {
	rows, err := l.db.pool.Query(ctx, `SELECT seq, line FROM (SELECT seq, line FROM airs_sessions ORDER BY seq DESC LIMIT $1) t ORDER BY seq`, n)
	if err != nil {
		return nil, fmt.Errorf("pg: reading the session log: %w", err)
	}
	var (
		seq  int64
		line []byte
		out  []session.Record
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		rec, err := session.DecodeLine(line)
		if err != nil {
			return fmt.Errorf("airs_sessions seq %d: %w", seq, err)
		}
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pg: reading the session log: %w", err)
	}
	return out, nil
}
