// Package pg keeps AIRS's shared state in PostgreSQL, for several `airs
// serve` replicas on one database: today the audit log (AuditLog), with
// its schema versioned and migrated on Open.
//
// It implements interfaces owned by the packages that use it —
// pipeline.AuditSink for the audit log — and hands back their types
// (audit.Record, audit.Report), so nothing above it sees pgx.
//
// # Migrations
//
// The schema is the numbered SQL files in migrations/, embedded. Open
// applies the missing ones in one transaction under a transaction-level
// advisory lock, so replicas starting together migrate once, and records
// each version in airs_schema. A database already migrated past the
// newest file this binary knows makes Open fail with ErrSchemaNewer: an
// older replica must not write into a schema it does not understand.
//
// # The audit chain
//
// One chain, appends serialised by a row lock on airs_audit_head (SELECT …
// FOR UPDATE), which holds the chain's last seq and hash. Each process
// group-commits: one writer goroutine takes every record queued since its
// last transaction, locks the head, links and inserts them, moves the head
// and commits; Append returns only after that COMMIT. The lines are the
// file log's (audit.AppendLine), so audit.Chain verifies both. The lock is
// held across the commit's WAL flush, so the chain's throughput is one
// batch per commit: see docs/scaling.md for why one chain and what that
// costs.
package pg
