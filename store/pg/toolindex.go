package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"

	"github.com/airs-dev/airs/embeddings"
)

// ToolIndex keeps AIRS's tool index in PostgreSQL (migration 0003): it is
// an embeddings.Store — set it as embeddings.Options.Store — and an
// embeddings.DenseSearcher, so the dense half of the hybrid search runs in
// the database with pgvector while BM25, the filters and the fusion stay
// in the embeddings package. Replicas share one set of vectors, embedded
// once, and one lexical basis.
//
// The dense score is computed exactly (no ANN index) with the in-memory
// scan's formula; the two differ only by float32 rounding (pgvector sums
// the dot product's products in order, the scan in eight lanes), which
// can swap two documents whose scores agree to about 1e-7.
type ToolIndex struct {
	db *DB
}

// ToolIndex returns the database's tool index.
func (db *DB) ToolIndex() *ToolIndex { return &ToolIndex{db: db} }

// toolIndexLock is the advisory lock key Syncs of the tool index hold
// ("airt" in ASCII; the migrations hold "airs").
const toolIndexLock = 0x61697274

var (
	_ embeddings.Store         = (*ToolIndex)(nil)
	_ embeddings.StoreLocker   = (*ToolIndex)(nil)
	_ embeddings.DenseSearcher = (*ToolIndex)(nil)
)

// Lock takes the session-level advisory lock that serialises Syncs across
// replicas; a replica that dies releases it with its connection.
func (t *ToolIndex) Lock(ctx context.Context) (func(), error) {
	conn, err := t.db.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("pg: tool index lock: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(toolIndexLock)); err != nil {
		conn.Release()
		return nil, fmt.Errorf("pg: tool index lock: %w", err)
	}
	return func() {
		// A fresh context: the unlock must happen even when the Sync's
		// context was cancelled, or the pooled connection keeps the lock.
		if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, int64(toolIndexLock)); err != nil {
			conn.Conn().Close(context.Background()) //nolint:errcheck // closing releases the lock
		}
		conn.Release()
	}, nil
}

// Load reads the whole index in one snapshot; the lexical basis only when
// the stored embedder is not have.
func (t *ToolIndex) Load(ctx context.Context, have string) (*embeddings.Stored, error) {
	tx, err := t.db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("pg: reading the tool index: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	var s embeddings.Stored
	err = tx.QueryRow(ctx, `SELECT embedder, dim, fit_docs, drift, CASE WHEN embedder <> $1 THEN fit END
		FROM airs_tool_index`, have).Scan(&s.Embedder, &s.Dim, &s.FitDocs, &s.Drift, &s.Fit)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pg: reading the tool index: %w", err)
	}
	rows, err := tx.Query(ctx, `SELECT id, doc::text, embedding FROM airs_tools ORDER BY id COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("pg: reading the tool index: %w", err)
	}
	var (
		id, doc string
		vec     pgvector.Vector
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &doc, &vec}, func() error {
		var d embeddings.Doc
		if err := json.Unmarshal([]byte(doc), &d); err != nil {
			return fmt.Errorf("tool %q: %w", id, err)
		}
		s.Docs = append(s.Docs, d)
		s.Vecs = append(s.Vecs, vec.Slice())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pg: reading the tool index: %w", err)
	}
	return &s, nil
}

// Save applies one Sync in one transaction and recomputes the group
// centroids from the stored vectors.
func (t *ToolIndex) Save(ctx context.Context, c *embeddings.StoreChange) error {
	if len(c.Upsert) != len(c.Vecs) {
		return fmt.Errorf("pg: tool index: %d documents with %d vectors", len(c.Upsert), len(c.Vecs))
	}
	tx, err := t.db.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("pg: writing the tool index: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	b := &pgx.Batch{}
	if c.Replace {
		b.Queue(`DELETE FROM airs_tools`)
	}
	if len(c.Remove) > 0 {
		b.Queue(`DELETE FROM airs_tools WHERE id = ANY($1)`, c.Remove)
	}
	for i := range c.Upsert {
		d := &c.Upsert[i]
		js, err := json.Marshal(d)
		if err != nil {
			return err
		}
		b.Queue(`INSERT INTO airs_tools (id, grp, doc, embedding) VALUES ($1, $2, $3::text::jsonb, $4)
			ON CONFLICT (id) DO UPDATE SET grp = EXCLUDED.grp, doc = EXCLUDED.doc, embedding = EXCLUDED.embedding`,
			d.ID, d.Group, string(js), pgvector.NewVector(c.Vecs[i]))
	}
	b.Queue(`INSERT INTO airs_tool_index (embedder, dim, fit_docs, drift, fit) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (one) DO UPDATE SET embedder = EXCLUDED.embedder, dim = EXCLUDED.dim,
			fit_docs = EXCLUDED.fit_docs, drift = EXCLUDED.drift,
			fit = coalesce(EXCLUDED.fit, airs_tool_index.fit),
			generation = airs_tool_index.generation + 1, updated_at = now()`,
		c.Embedder, c.Dim, c.FitDocs, c.Drift, c.Fit)
	// avg accumulates in float8 and the cosine is scale-free, so the mean
	// stands for the sum with one float32 rounding instead of n.
	b.Queue(`DELETE FROM airs_tool_groups`)
	b.Queue(`INSERT INTO airs_tool_groups (grp, centroid, norm)
		SELECT grp, avg(embedding), vector_norm(avg(embedding)) FROM airs_tools WHERE grp <> '' GROUP BY grp`)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("pg: writing the tool index: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("pg: writing the tool index: commit: %w", err)
	}
	return nil
}

// denseScore is the in-memory scan's dense score of tool t: the cosine
// with the query (vectors are unit length: the negated inner product) plus
// the group weight times the group centroid's cosine.
const denseScore = `-(t.embedding <#> $1) +
	CASE WHEN $2::float8 > 0 AND g.norm > 0 THEN $2::float8 * -(g.centroid <#> $1) / g.norm ELSE 0 END`

// denseQuery answers a DenseSearch in one statement. Rows of kind 0 name
// the stored vectors' embedder, 1 are the top (every allowed tool scored,
// ordered as TopK orders: score, then ID in byte order), 2 the scores of
// the BM25 candidates (primary-key lookups). The ID sets are joined as
// hashed subqueries: `id = ANY($n)` would compare each row with the
// whole array.
const denseQuery = `(SELECT embedder, 0::float8, 0 FROM airs_tool_index)
UNION ALL
(SELECT t.id, ` + denseScore + `, 1
	FROM airs_tools t LEFT JOIN airs_tool_groups g ON t.grp <> '' AND g.grp = t.grp
	WHERE $3::text[] IS NULL OR t.id IN (SELECT unnest($3::text[]))
	ORDER BY 2 DESC, t.id COLLATE "C" LIMIT $4)
UNION ALL
(SELECT t.id, ` + denseScore + `, 2
	FROM airs_tools t LEFT JOIN airs_tool_groups g ON t.grp <> '' AND g.grp = t.grp
	WHERE t.id = ANY($5))`

// DenseSearch implements embeddings.DenseSearcher with one query, which
// also reads the stored vectors' embedder: when it is not embedder, the
// answer is embeddings.ErrStaleStore.
func (t *ToolIndex) DenseSearch(ctx context.Context, embedder string, q []float32, groupWeight float64, depth int, allowed, also []string) ([]embeddings.DenseScore, map[string]float64, error) {
	if also == nil {
		also = []string{}
	}
	rows, err := t.db.pool.Query(ctx, denseQuery, pgvector.NewVector(q), groupWeight, allowed, depth, also)
	if err != nil {
		return nil, nil, fmt.Errorf("pg: tool index search: %w", err)
	}
	var (
		top    []embeddings.DenseScore
		others = make(map[string]float64, len(also))
		stored string
		id     string
		score  float64
		kind   int
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &score, &kind}, func() error {
		switch kind {
		case 0:
			stored = id
		case 1:
			top = append(top, embeddings.DenseScore{ID: id, Score: score})
		default:
			others[id] = score
		}
		return nil
	})
	if err != nil {
		// A vector of another dimension than q's (another embedder) fails
		// the operator before the embedder row can say so.
		if strings.Contains(err.Error(), "different vector dimensions") {
			return nil, nil, embeddings.ErrStaleStore
		}
		return nil, nil, fmt.Errorf("pg: tool index search: %w", err)
	}
	if stored != embedder {
		return nil, nil, embeddings.ErrStaleStore
	}
	return top, others, nil
}
