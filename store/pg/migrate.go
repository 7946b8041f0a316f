package pg

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema step: version N is migrations/000N_*.sql.
type migration struct {
	version int
	name    string
	sql     string
}

var migrations = mustLoadMigrations(migrationFiles)

// ErrSchemaNewer: the database was migrated by a newer AIRS than this one.
var ErrSchemaNewer = errors.New("pg: the database schema is newer than this airs")

// migrateLock is the advisory lock key under which migrations run (any
// constant; this one spells "airs" in ASCII).
const migrateLock = 0x61697273

func mustLoadMigrations(fsys fs.FS) []migration {
	ms, err := loadMigrations(fsys)
	if err != nil {
		panic(err)
	}
	return ms
}

// loadMigrations reads migrations/NNNN_name.sql, which must number 1, 2, 3…
// without gaps, so a version means the same schema in every binary.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for i, n := range names { // fs.Glob sorts
		base := path.Base(n)
		num, rest, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v != i+1 {
			return nil, fmt.Errorf("pg: migration %s: want the name %04d_WHAT.sql (versions run 1, 2, 3… without gaps)", n, i+1)
		}
		sql, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(rest, ".sql"), sql: string(sql)})
	}
	return ms, nil
}

// SchemaVersion is the newest schema version this binary knows.
func SchemaVersion() int { return len(migrations) }

// migrate brings the database to the newest of ms, all or nothing.
func migrate(ctx context.Context, pool *pgxpool.Pool, ms []migration) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: migrating: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	// Released at commit or rollback, so a replica that dies mid-migration
	// leaves neither the lock nor half a schema.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock)); err != nil {
		return fmt.Errorf("pg: migrating: taking the migration lock: %w", err)
	}
	// Created only when missing: a role that may not create tables (its
	// schema migrated by a DBA with this binary) still starts.
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('airs_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return fmt.Errorf("pg: migrating: %w", err)
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE TABLE airs_schema (
			version    integer PRIMARY KEY,
			name       text NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("pg: migrating: creating airs_schema: %w", err)
		}
	}
	var have int
	if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM airs_schema`).Scan(&have); err != nil {
		return fmt.Errorf("pg: migrating: reading the schema version: %w", err)
	}
	if have > len(ms) {
		return fmt.Errorf("%w: the database is at schema version %d, this airs knows versions up to %d: "+
			"a newer airs migrated it; run that version (or newer) here too, never an older one against this database", ErrSchemaNewer, have, len(ms))
	}
	for _, m := range ms[have:] {
		if _, err := tx.Exec(ctx, m.sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			if strings.Contains(m.sql, "CREATE EXTENSION IF NOT EXISTS vector") && strings.Contains(err.Error(), "vector") {
				return fmt.Errorf("pg: migration %04d_%s: %w (the tool index needs the pgvector extension: install it on the server, "+
					"e.g. apt-get install postgresql-15-pgvector, and run CREATE EXTENSION vector as a superuser in this database once)", m.version, m.name, err)
			}
			return fmt.Errorf("pg: migration %04d_%s: %w", m.version, m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO airs_schema (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			return fmt.Errorf("pg: recording migration %d: %w", m.version, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: migrating: commit: %w", err)
	}
	return nil
}
