package pg

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/pipeline/audit"
)

// ErrAuditClosed is returned by Append after Close.
var ErrAuditClosed = errors.New("pg: audit log closed")

// AppendTimeout bounds one batch's transaction: an Append waiting on a
// database that does not answer fails (unacknowledged) rather than hanging
// its call.
const AppendTimeout = 30 * time.Second

// AuditLog appends audit records to the database's one chain. It is a
// pipeline.AuditSink; Append is safe for concurrent use, and any number of
// AuditLogs — in one process or in many, on one machine or on several —
// may append to the same database.
type AuditLog struct {
	db *DB

	mu      sync.Mutex
	pending *auditBatch
	closed  bool

	wake    chan struct{} // cap 1: "pending is not empty"
	stop    chan struct{}
	writers sync.WaitGroup

	commits atomic.Int64
	records atomic.Int64
}

type auditBatch struct {
	recs   []*audit.Record
	bodies [][]byte
	done   chan struct{}
	err    error
}

func newAuditBatch() *auditBatch { return &auditBatch{done: make(chan struct{})} }

// auditWriters is how many batches one AuditLog has in flight: one. The
// head's row lock is held through each commit's WAL flush, so commits on
// the chain never overlap — not even within one process — and the chain's
// throughput is records per batch × commits per second. A second batch in
// flight would not add commits, only split the queue into smaller batches
// (measured: BenchmarkAuditWriters). A variable for that benchmark.
var auditWriters = 1

// AuditLog starts the writers of this process's appends.
func (db *DB) AuditLog() *AuditLog {
	l := &AuditLog{db: db, pending: newAuditBatch(), wake: make(chan struct{}, 1), stop: make(chan struct{})}
	for range auditWriters {
		l.writers.Go(l.run)
	}
	return l
}

// Commits is how many transactions this AuditLog committed (each carrying
// a batch of records); Records how many records they carried.
func (l *AuditLog) Commits() int64 { return l.commits.Load() }

// Records is how many records this AuditLog's commits carried.
func (l *AuditLog) Records() int64 { return l.records.Load() }

// Append queues r, waits until the transaction that links it into the
// chain has committed, and fills r.Seq and r.Prev. An error means the
// record may or may not be in the log (a COMMIT whose answer was lost):
// the call was not acknowledged.
func (l *AuditLog) Append(r *audit.Record) error {
	body := r.AppendBody(make([]byte, 0, 256))
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrAuditClosed
	}
	b := l.pending
	b.recs = append(b.recs, r)
	b.bodies = append(b.bodies, body)
	first := len(b.recs) == 1
	l.mu.Unlock()
	if first {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
	<-b.done
	return b.err
}

// run is one writer: it takes every record queued since a writer last
// took them and appends them as one batch.
func (l *AuditLog) run() {
	for {
		stopping := false
		select {
		case <-l.wake:
		case <-l.stop:
			stopping = true
		}
		l.mu.Lock()
		b := l.pending
		if len(b.recs) > 0 {
			l.pending = newAuditBatch()
		}
		l.mu.Unlock()
		if len(b.recs) > 0 {
			b.err = l.write(b)
			if b.err == nil {
				l.commits.Add(1)
				l.records.Add(int64(len(b.recs)))
			}
			close(b.done)
		}
		if stopping {
			return
		}
	}
}

// write links and inserts one batch in one statement (its own
// transaction; airs_audit_append, migration 0002). Nothing is kept between
// batches — the head row is the chain's only tail — so a failed batch
// (rolled back, or of unknown outcome) leaves the next one correct either
// way.
func (l *AuditLog) write(b *auditBatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), AppendTimeout)
	defer cancel()
	bodies := make([]string, len(b.bodies))
	for i, body := range b.bodies {
		bodies[i] = string(body)
	}
	rows, err := l.db.pool.Query(ctx, `SELECT r_seq, r_prev FROM airs_audit_append($1::text[])`, bodies)
	if err != nil {
		return fmt.Errorf("pg: audit append: %w", err)
	}
	seqs := make([]uint64, 0, len(bodies))
	prevs := make([]string, 0, len(bodies))
	var seq uint64
	var prev string
	_, err = pgx.ForEachRow(rows, []any{&seq, &prev}, func() error {
		seqs, prevs = append(seqs, seq), append(prevs, prev)
		return nil
	})
	// The statement's COMMIT is part of it: no error means committed.
	if err != nil {
		return fmt.Errorf("pg: audit append (the records may or may not be in the log; the calls were not acknowledged): %w", err)
	}
	if len(seqs) != len(b.recs) {
		return fmt.Errorf("pg: audit append: %d records linked for %d sent: is the database's airs_audit_append the one this airs migrated?", len(seqs), len(b.recs))
	}
	for i, r := range b.recs {
		r.Seq, r.Prev = seqs[i], prevs[i]
	}
	return nil
}

// Close waits for the queued records' transaction and stops the writer.
// It does not close the DB.
func (l *AuditLog) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.mu.Unlock()
	close(l.stop)
	l.writers.Wait()
	return nil
}

// VerifyAudit checks the whole chain in seq order with the file log's rules
// (audit.Chain), then that the head row names the last record: unlike a
// file, the database also catches rows cut from the end — unless whoever
// cut them rewrote the head too, so anchor LastHash elsewhere all the same.
func (db *DB) VerifyAudit(ctx context.Context) (*audit.Report, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	c := audit.NewChain()
	rows, err := tx.Query(ctx, `SELECT seq, line FROM airs_audit ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: %w", err)
	}
	var seq int64
	var line []byte
	ok := true
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		if ok {
			ok = c.Add(line)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: reading the records: %w", err)
	}
	rep := c.Report()
	if !rep.OK() {
		return rep, nil
	}
	var headSeq uint64
	var headHash []byte
	if err := tx.QueryRow(ctx, `SELECT seq, hash FROM airs_audit_head`).Scan(&headSeq, &headHash); err != nil {
		return nil, fmt.Errorf("pg: audit verify: reading the chain head: %w", err)
	}
	switch {
	case headSeq != rep.LastSeq:
		c.Break(headSeq, fmt.Sprintf("the chain head says the last record is seq %d, the records end at seq %d (records cut from the end, or the head edited)", headSeq, rep.LastSeq))
	case hex.EncodeToString(headHash) != rep.LastHash:
		c.Break(headSeq, "the chain head's hash is not the last record's (the last record or the head edited)")
	}
	return c.Report(), nil
}

// TailAudit returns the last n records, oldest first.
func (db *DB) TailAudit(ctx context.Context, n int) ([]audit.Record, error) {
	rows, err := db.pool.Query(ctx, `SELECT line FROM airs_audit ORDER BY seq DESC LIMIT $1`, n)
	if err != nil {
		return nil, fmt.Errorf("pg: audit tail: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, fmt.Errorf("pg: audit tail: %w", err)
	}
	slices.Reverse(lines)
	out := make([]audit.Record, 0, len(lines))
	for _, ln := range lines {
		var r audit.Record
		if err := json.Unmarshal(ln, &r); err != nil {
			return out, fmt.Errorf("pg: audit tail: %w: %.80q", audit.ErrCorrupt, ln)
		}
		out = append(out, r)
	}
	return out, nil
}
