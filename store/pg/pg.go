package pg

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DB is an open, migrated AIRS database.
type DB struct {
	pool *pgxpool.Pool
}

// Open connects to the database at dsn (a libpq URL or key=value string)
// and applies the schema migrations this binary has that the database
// lacks. It fails with ErrSchemaNewer when the database is ahead of this
// binary.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if dsn == "" {
		return nil, errors.New("pg: no DSN: set storage.dsn in airs.yaml (e.g. postgres://airs@db.example:5432/airs)")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's message can quote the DSN, password included.
		return nil, errors.New("pg: storage.dsn is not a valid PostgreSQL connection string (want postgres://USER@HOST:PORT/DB or key=value pairs)")
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		// One pool per process carries every concern: the audit writers,
		// the session recorder's writer, the claims and the guard's
		// row-locked updates on the call path, the index, learned state
		// and the recommender's sweeps, readers (verify, tail) beside
		// them. Until processes shared one pool the audit log and the
		// engine had auditWriters+4 each; this keeps that headroom.
		cfg.MaxConns = max(cfg.MaxConns, 2*(int32(auditWriters)+4))
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pg: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: connecting to %s:%d/%s: %w (is PostgreSQL running, and storage.dsn right?)",
			cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database, err)
	}
	// The audit chain hashes lines the server stores and hashes as UTF-8
	// (migration 0002): another server encoding would change their bytes.
	var enc string
	if err := pool.QueryRow(ctx, `SHOW server_encoding`).Scan(&enc); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pg: %w", err)
	}
	if enc != "UTF8" {
		pool.Close()
		return nil, fmt.Errorf("pg: database %s has encoding %s: AIRS needs a UTF8 database (CREATE DATABASE … ENCODING 'UTF8' TEMPLATE template0)", cfg.ConnConfig.Database, enc)
	}
	if err := migrate(ctx, pool, migrations); err != nil {
		pool.Close()
		return nil, err
	}
	return &DB{pool: pool}, nil
}

// Close closes the connections; close the AuditLogs first.
func (db *DB) Close() { db.pool.Close() }
