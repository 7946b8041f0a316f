package pg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airs-dev/airs/pipeline"
)

// Claims is pipeline.CallClaims on PostgreSQL (migrations 0005, 0009): one
// row per claimed call id, shared by every replica on the database, with
// the first attempt's outcome once it ended.
type Claims struct {
	db *DB
	// Retention: claims older than this are deleted (0:
	// pipeline.DefaultClaimRetention), by Claim at most once an hour per
	// process.
	Retention time.Duration

	mu        sync.Mutex
	lastPrune time.Time
}

// Claims returns the database's call claims.
func (db *DB) Claims() *Claims { return &Claims{db: db} }

// Claim inserts callID's claim in its own (autocommitted) statement, so it
// is durable before the caller runs the tool; when the id was claimed
// before it returns that claim, with its outcome when it has one.
func (c *Claims) Claim(ctx context.Context, callID, caller, tool string) (*pipeline.Claim, error) {
	c.maybePrune(ctx)
	for range 2 {
		tag, err := c.db.pool.Exec(ctx,
			`INSERT INTO airs_call_claims (call_id, caller, tool) VALUES ($1, $2, $3) ON CONFLICT (call_id) DO NOTHING`,
			callID, caller, tool)
		if err != nil {
			return nil, fmt.Errorf("pg: claiming call %s: %w", callID, err)
		}
		if tag.RowsAffected() == 1 {
			return nil, nil
		}
		cl := &pipeline.Claim{CallID: callID}
		var outcome *string
		err = c.db.pool.QueryRow(ctx, `SELECT caller, tool, claimed_at, outcome FROM airs_call_claims WHERE call_id = $1`, callID).
			Scan(&cl.Caller, &cl.Tool, &cl.ClaimedAt, &outcome)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // pruned between the two statements: claim it again
		}
		if err != nil {
			return nil, fmt.Errorf("pg: reading the claim of call %s: %w", callID, err)
		}
		if outcome != nil {
			var st storedOutcome
			if err := json.Unmarshal([]byte(*outcome), &st); err != nil {
				return nil, fmt.Errorf("pg: the outcome recorded for call %s: %w", callID, err)
			}
			o := st.ClaimOutcome
			o.Output = st.Output
			cl.Outcome = &o
		}
		return cl, nil
	}
	return nil, fmt.Errorf("pg: claiming call %s: its claim came and went twice", callID)
}

// storedOutcome is a ClaimOutcome as the outcome column holds it: the
// output as base64, since encoding/json would compact a raw JSON value and
// a retry gets the output byte for byte.
type storedOutcome struct {
	pipeline.ClaimOutcome
	Output []byte `json:"output,omitempty"`
}

// Finish records the outcome of the attempt that holds callID's claim.
func (c *Claims) Finish(ctx context.Context, callID string, o pipeline.ClaimOutcome) error {
	b, err := json.Marshal(storedOutcome{ClaimOutcome: o, Output: o.Output})
	if err != nil {
		return fmt.Errorf("pg: the outcome of call %s: %w", callID, err)
	}
	tag, err := c.db.pool.Exec(ctx, `UPDATE airs_call_claims SET outcome = $2, finished_at = now() WHERE call_id = $1`, callID, string(b))
	if err != nil {
		return fmt.Errorf("pg: recording the outcome of call %s: %w", callID, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("pg: no claim of call %s to record its outcome on (pruned?)", callID)
	}
	return nil
}

// Prune deletes the claims made before `before`.
func (c *Claims) Prune(ctx context.Context, before time.Time) (int, error) {
	tag, err := c.db.pool.Exec(ctx, `DELETE FROM airs_call_claims WHERE claimed_at < $1`, before)
	if err != nil {
		return 0, fmt.Errorf("pg: pruning call claims: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

func (c *Claims) retention() time.Duration {
	if c.Retention > 0 {
		return c.Retention
	}
	return pipeline.DefaultClaimRetention
}

// maybePrune deletes the claims past the retention when the last prune is
// an hour old (one indexed DELETE, on the claiming call's path). The clock
// is the database's (claimed_at is its now()). A failure is left to the
// next hour.
func (c *Claims) maybePrune(ctx context.Context) {
	c.mu.Lock()
	if time.Since(c.lastPrune) < time.Hour {
		c.mu.Unlock()
		return
	}
	c.lastPrune = time.Now()
	c.mu.Unlock()
	_, _ = c.db.pool.Exec(ctx, `DELETE FROM airs_call_claims WHERE claimed_at < now() - $1::interval`,
		fmt.Sprintf("%d milliseconds", c.retention().Milliseconds()))
}
