package pg

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/pipeline/audit"
)

// ReadAudit calls fn with every record of the audit log in seq order —
// the merged order of every process's chain, oldest first — as the file
// log's readers see its lines (`airs guard train` learns from them). It
// reads in one snapshot, so records appended meanwhile by other replicas
// are left for the next read. Seq order is the order records were linked,
// not the order their commits became visible: a snapshot may hold seq 9
// of one chain while seq 8 of another still commits, so a reader must not
// resume "after the last seq it saw" (none does; each reads a snapshot).
func (db *DB) ReadAudit(ctx context.Context, fn func(*audit.Record) error) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("pg: reading the audit log: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	rows, err := tx.Query(ctx, `SELECT seq, line FROM airs_audit ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("pg: reading the audit log: %w", err)
	}
	var (
		seq  int64
		line []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&seq, &line}, func() error {
		var r audit.Record
		if err := json.Unmarshal(line, &r); err != nil {
			return fmt.Errorf("record %d: %w: %v (`airs audit verify` says where the chain breaks)", seq, audit.ErrCorrupt, err)
		}
		return fn(&r)
	})
	if err != nil {
		return fmt.Errorf("pg: reading the audit log: %w", err)
	}
	return nil
}
