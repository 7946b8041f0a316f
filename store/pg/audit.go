package pg

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

// AuditLog appends audit records to a chain of its own in the database's
// log: the first batch it commits starts a new chain (the next chain id),
// and every later batch extends it, so no two AuditLogs — in one process or
// in many, on one machine or on several — ever wait for each other's
// commits. Every record also takes a seq from one sequence all chains
// share, the log's merged order, which every reader reads in. It is a
// pipeline.AuditSink; Append is safe for concurrent use.
type AuditLog struct {
	db     *DB
	origin string // recorded with each chain this AuditLog starts

	q       *audit.Batcher
	opts    AuditOptions
	writers sync.WaitGroup

	commits atomic.Int64
	records atomic.Int64
}

// auditWriters is how many batches one AuditLog has in flight: one, so
// one chain per process (each writer links into a chain of its own).
// Within a chain commits cannot overlap — its head's row lock is held
// through each commit's WAL flush — so a process's throughput is records
// per batch × commits per second; more writers would be more chains per
// process (BenchmarkAuditWriters measures it). A variable for that
// benchmark.
var auditWriters = 1

// AuditOptions tune an AuditLog.
type AuditOptions struct {
	// Gather bounds how long the writer waits, before a commit, for the
	// pending batch to grow to the size concurrent calls have lately
	// reached (0: never waits; see gather).
	Gather time.Duration
}

// DefaultAuditGather is AuditLog's Gather (airs.yaml's
// storage.audit_gather sets another): the writer waits at most this long
// for the pending batch to reach its target (see run), and a lone call
// never waits. BENCHMARKS.md ("Gathering toward the recent batch size")
// measures what it gains replicas sharing one load, and how.
const DefaultAuditGather = 3 * time.Millisecond

// AuditLog starts the writers of this process's appends with the default
// options. Its chain is started by its first commit, not here: a process
// that never appends leaves no chain behind.
func (db *DB) AuditLog() *AuditLog {
	return db.AuditLogWith(AuditOptions{Gather: DefaultAuditGather})
}

// AuditLogWith is AuditLog with chosen options.
func (db *DB) AuditLogWith(opts AuditOptions) *AuditLog {
	l := &AuditLog{db: db, opts: opts, origin: auditOrigin(), q: audit.NewBatcher(ErrAuditClosed)}
	for range auditWriters {
		l.writers.Go(l.run)
	}
	return l
}

// auditOrigin names this process in the chains it starts (the verify
// report lists them), to tell which replica a chain is.
func auditOrigin() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}

// Commits is how many transactions this AuditLog committed (each carrying
// a batch of records); Records how many records they carried.
func (l *AuditLog) Commits() int64 { return l.commits.Load() }

// Records is how many records this AuditLog's commits carried.
func (l *AuditLog) Records() int64 { return l.records.Load() }

// Append queues r, waits until the transaction that links it into this
// AuditLog's chain has committed, and fills r.Seq, r.Chain and r.Prev. An
// error means the record may or may not be in the log (a COMMIT whose
// answer was lost): the call was not acknowledged.
func (l *AuditLog) Append(r *audit.Record) error {
	return l.q.Add(r, r.AppendBody(make([]byte, 0, 256)))
}

// run is one writer: it takes every record queued since a writer last
// took them and appends them as one batch to its chain. When the last
// batch carried more than one record — calls are arriving concurrently,
// so waiting gathers more per commit, and commits are what replicas
// splitting one load pay for most (docs/scaling.md, "Gathering batches")
// — it first waits, at most Gather, for as many as the largest recent
// batch, so the wait ends as soon as the calls that have lately been
// running together are all in; a lone call never waits.
func (l *AuditLog) run() {
	var chain uint64 // 0 until a batch that starts one commits
	var sizes batchSizes
	for {
		target := 0
		if sizes.last() > 1 {
			target = min(sizes.max(), gatherCap)
		}
		b, closing := l.q.Take(l.opts.Gather, target)
		if b != nil {
			err := l.write(b, &chain)
			sizes.add(len(b.Recs))
			if err == nil {
				l.commits.Add(1)
				l.records.Add(int64(len(b.Recs)))
			}
			b.Finish(err)
		}
		if closing {
			return
		}
	}
}

// gatherCap bounds the batch a gathering writer waits for: a commit costs
// the database about as much as this many records' inserts
// (BENCHMARKS.md), so past this a batch gains little from growing while
// its calls wait longer.
const gatherCap = 16

// batchSizes remembers the sizes of a writer's last batches. Their
// largest is how many calls have lately been appending at once — what
// the next batch can gather without waiting for calls that do not exist.
// A burst raises it at once; it falls when the burst's batch leaves the
// window, so after load drops the writer waits in vain (the Gather
// bound) for at most len(batchSizes) batches.
type batchSizes struct {
	ring [16]int
	n    int
}

func (s *batchSizes) add(size int) { s.ring[s.n%len(s.ring)] = size; s.n++ }

// last is the size of the last batch (0 before the first).
func (s *batchSizes) last() int {
	if s.n == 0 {
		return 0
	}
	return s.ring[(s.n-1)%len(s.ring)]
}

func (s *batchSizes) max() int { return slices.Max(s.ring[:]) }

// write links and inserts one batch into *chain (0: a new chain, whose id
// it stores there once committed) in one statement, its own transaction
// (airs_audit_append_chain, migration 0010). Nothing is kept between
// batches but the chain id — the head row is the chain's only tail — so a
// failed batch (rolled back, or of unknown outcome) leaves the next one
// correct either way; a failed first batch leaves a chain that either
// exists whole or not at all, and the next batch starts another.
func (l *AuditLog) write(b *audit.Batch, chain *uint64) error {
	ctx, cancel := context.WithTimeout(context.Background(), AppendTimeout)
	defer cancel()
	bodies := make([]string, len(b.Bodies))
	for i, body := range b.Bodies {
		bodies[i] = string(body)
	}
	rows, err := l.db.pool.Query(ctx, `SELECT r_chain, r_seq, r_prev FROM airs_audit_append_chain($1, $2, $3::text[])`,
		int64(*chain), l.origin, bodies)
	if err != nil {
		return fmt.Errorf("pg: audit append: %w", err)
	}
	seqs := make([]uint64, 0, len(bodies))
	prevs := make([]string, 0, len(bodies))
	var (
		ch, seq uint64
		prev    string
	)
	_, err = pgx.ForEachRow(rows, []any{&ch, &seq, &prev}, func() error {
		seqs, prevs = append(seqs, seq), append(prevs, prev)
		return nil
	})
	// The statement's COMMIT is part of it: no error means committed.
	if err != nil {
		return fmt.Errorf("pg: audit append (the records may or may not be in the log; the calls were not acknowledged): %w", err)
	}
	if len(seqs) != len(b.Recs) || (*chain != 0 && ch != *chain) {
		return fmt.Errorf("pg: audit append: %d records linked into chain %d for %d sent to chain %d: is the database's airs_audit_append_chain the one this airs migrated?",
			len(seqs), ch, len(b.Recs), *chain)
	}
	*chain = ch
	for i, r := range b.Recs {
		r.Seq, r.Chain, r.Prev = seqs[i], ch, prevs[i]
	}
	return nil
}

// Close waits for the queued records' transaction and stops the writer.
// It does not close the DB.
func (l *AuditLog) Close() error {
	if l.q.Close() {
		l.writers.Wait()
	}
	return nil
}

// VerifyAudit checks the whole log in one snapshot (audit.Chains): every
// chain with the file log's rules (audit.Chain; chain 0, the log kept as
// one chain before schema version 10, exactly as a file), the merge — seqs
// increasing along each chain, each line naming its row's seq and chain —
// and every chain's head row against its last record, which catches
// records cut from a chain's end (unless whoever cut them rewrote that
// head too: anchor the chains' heads, Report.Chains, elsewhere all the
// same).
func (db *DB) VerifyAudit(ctx context.Context) (*audit.Report, error) {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	m := audit.NewChains()
	rows, err := tx.Query(ctx, `SELECT seq, chain, line FROM airs_audit ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: %w", err)
	}
	var seq, chain int64
	var line []byte
	ok := true
	_, err = pgx.ForEachRow(rows, []any{&seq, &chain, &line}, func() error {
		if ok {
			// A negative seq or chain (only tampering makes one)
			// becomes a huge number no line names: a break like any.
			ok = m.Add(uint64(chain), uint64(seq), line)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: reading the records: %w", err)
	}
	hrows, err := tx.Query(ctx, `SELECT chain, seq, hash, origin FROM airs_audit_chains ORDER BY chain`)
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: reading the chain heads: %w", err)
	}
	var heads []audit.ChainHead
	var hash []byte
	var origin string
	_, err = pgx.ForEachRow(hrows, []any{&chain, &seq, &hash, &origin}, func() error {
		heads = append(heads, audit.ChainHead{Chain: uint64(chain), Seq: uint64(seq), Hash: hex.EncodeToString(hash), Origin: origin})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pg: audit verify: reading the chain heads: %w", err)
	}
	m.Heads(heads)
	return m.Report(), nil
}

// TailAudit returns the last n records in seq order (the merged order of
// the chains), oldest first.
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
