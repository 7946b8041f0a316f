package pg

import (
	"context"
	"fmt"
)

// Claims is pipeline.CallClaims on PostgreSQL (migration 0005): one row per
// claimed call id, shared by every replica on the database.
type Claims struct{ db *DB }

// Claims returns the database's call claims.
func (db *DB) Claims() *Claims { return &Claims{db: db} }

// Claim inserts callID's claim in its own (autocommitted) statement, so it
// is durable before the caller runs the tool; claimed is false when the id
// was claimed before.
func (c *Claims) Claim(ctx context.Context, callID, caller, tool string) (bool, error) {
	tag, err := c.db.pool.Exec(ctx,
		`INSERT INTO airs_call_claims (call_id, caller, tool) VALUES ($1, $2, $3) ON CONFLICT (call_id) DO NOTHING`,
		callID, caller, tool)
	if err != nil {
		return false, fmt.Errorf("pg: claiming call %s: %w", callID, err)
	}
	return tag.RowsAffected() == 1, nil
}
