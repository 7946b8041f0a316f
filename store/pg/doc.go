// Package pg keeps AIRS's shared state in PostgreSQL, for several `airs
// serve` replicas on one database: the audit log (AuditLog, with
// ReadAudit and TailAudit for its readers), the tool index on pgvector
// (ToolIndex), named state documents replicas merge into (State: the
// ranker's learned statistics and preferences), the recorded sessions
// (SessionLog), the recommender's learned state (RecommenderStore) and the
// guard's reviews and anomaly models (GuardStore, AnomalyModels), with the
// schema versioned and migrated on Open.
//
// It implements interfaces owned by the packages that use it —
// pipeline.AuditSink for the audit log, embeddings.Store and
// embeddings.DenseSearcher for the tool index, session.Sink,
// recommender.Store, guard.StateStore and guard.ModelStore — and hands back their
// types (audit.Record, audit.Report, embeddings.Doc), so nothing above it
// sees pgx.
//
// # The tool index
//
// airs_tools holds each tool's document (jsonb) and unit vector,
// airs_tool_groups each group's mean vector and its norm, airs_tool_index
// the manifest and the lexical basis. The dense score is computed by one
// exact query with the in-memory scan's formula (cosine plus the group
// weight times the centroid's cosine, ties by ID in byte order); BM25 and
// the fusion stay in package embeddings, so the ranking is the embedded
// index's (TestToolIndexPGMatchesEmbedded; the retrieval evaluations give
// the same figures, TestToolIndexPGRetrievalEval). Syncs from several
// replicas are serialised by a session advisory lock.
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
// # The audit chains
//
// One hash chain per writing process, merged by one sequence (migration
// 0010; docs/scaling.md says why). Each AuditLog group-commits: one
// writer goroutine takes every record queued since its last batch and
// sends their bodies (audit.Record.AppendBody, encoded in the caller's
// goroutine) to airs_audit_append_chain, a server-side function that locks
// the AuditLog's own chain head in airs_audit_chains (SELECT … FOR UPDATE;
// its first batch starts the chain, taking the next id), gives each record
// the next seq of airs_audit_seq, links each body exactly as
// audit.AppendChainLine does, inserts the lines and moves the head, in one
// statement and so one transaction. Append returns only after that
// statement — its COMMIT included — succeeded. The head's lock is held
// across the commit's WAL flush, but no other process ever waits for it:
// the processes' commits overlap and the server flushes them together.
// VerifyAudit recomputes every hash in Go with audit.Chains (each chain by
// the file log's rules, the merge, the heads), so the SQL encoding is
// checked against Go's on every verify. The records of the one chain kept
// before migration 0010 are chain 0, checked exactly as a file.
package pg
