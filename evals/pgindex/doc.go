// Package pgindex holds the tests that measure the tool index on
// PostgreSQL + pgvector (store/pg ToolIndex) against the embedded index on
// the retrieval evals (evals/retrieval). They live here, not in store/pg,
// because evals sit above the storage backends: store/pg must not import
// evals/ (arch_test.go), even in its tests.
package pgindex
