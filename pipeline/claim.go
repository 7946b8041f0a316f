package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// CallClaims makes a retried call run at most once across replicas. A
// client that got no answer (its replica died) retries on another replica
// with the same call_id; without a claim the tool would run again there.
// So, just before stage 6, a call to a tool that is not idempotent whose
// call_id came from the client is claimed: the claim is durable before the
// handler starts (the side effect), and a second claim of the same id
// fails, whichever replica makes it.
//
// When the attempt that holds the claim ends, its outcome (output or
// error) is recorded on the claim, after its audit record is durable and
// before its answer goes out. A retry then gets that outcome back, marked
// Result.Replayed, without running anything; a retry while the first
// attempt runs — or after its replica died mid-call, which no one can tell
// apart from a slow call — is answered AlreadyClaimed with a retry-after
// hint. A retry by another caller is answered AlreadyClaimed, never the
// output.
//
// Idempotent tools are not claimed (running one twice is harmless, and a
// claim costs a commit), nor are calls whose id the pipeline made up (no
// one can retry an id they never saw). Claims older than a retention are
// pruned (the store's Retention): a retry after that runs the call again.
type CallClaims interface {
	// Claim records callID as started by caller for tool. When an earlier
	// claim holds the id it records nothing and returns that claim; err
	// means the claim could not be recorded, and the call is then not run.
	Claim(ctx context.Context, callID, caller, tool string) (earlier *Claim, err error)
	// Finish records the outcome of the attempt that holds callID's claim.
	Finish(ctx context.Context, callID string, o ClaimOutcome) error
	// Prune deletes the claims made before `before` and says how many.
	Prune(ctx context.Context, before time.Time) (int, error)
}

// Claim is an earlier claim of a call id.
type Claim struct {
	CallID, Caller, Tool string
	ClaimedAt            time.Time
	// Outcome is nil while the first attempt has not finished (or its
	// replica died mid-call).
	Outcome *ClaimOutcome
}

// ClaimOutcome is how the first attempt of a claimed call ended: what a
// retry gets back.
type ClaimOutcome struct {
	Outcome   Outcome         `json:"outcome"`
	ErrorKind string          `json:"error_kind,omitempty"`
	Error     string          `json:"error,omitempty"` // the error's message
	Output    json.RawMessage `json:"output,omitempty"`
	Provider  string          `json:"provider,omitempty"`
	Version   string          `json:"version,omitempty"`
	Latency   time.Duration   `json:"latency_ns,omitempty"`
}

// DefaultClaimRetention is how long claims are kept when the store is not
// told (config: claims.retention).
const DefaultClaimRetention = 7 * 24 * time.Hour

// AlreadyClaimed: an earlier attempt of this call_id claimed it (on this
// replica or another) and has not finished — or is another caller's — so
// this one was not run.
type AlreadyClaimed struct {
	CallID, Tool string
	// RetryAfterMs: when to ask again for the first attempt's outcome (0:
	// asking again will not help: the claim is another caller's).
	RetryAfterMs int64
	// OtherCaller: the claim is another caller's.
	OtherCaller bool
}

func (e *AlreadyClaimed) Error() string {
	if e.OtherCaller {
		return fmt.Sprintf("already claimed: call %s (%s) was started by another caller and is not run again; use a call_id of your own", e.CallID, e.Tool)
	}
	return fmt.Sprintf("already claimed: call %s (%s) was started by an earlier attempt that has not finished; ask again in %d ms for its outcome "+
		"(none ever comes if that attempt's replica died mid-call: the audit log then has no record of it)", e.CallID, e.Tool, e.RetryAfterMs)
}
func (e *AlreadyClaimed) Kind() string         { return KindAlreadyClaimed }
func (e *AlreadyClaimed) Is(target error) bool { return target == ErrAlreadyClaimed }

// MemoryClaims is CallClaims for one process: it dedupes retries that come
// back to the same replica, and forgets everything when the process ends
// (replicas share a database's claims: store/pg).
type MemoryClaims struct {
	// Retention: claims older than this are dropped (0:
	// DefaultClaimRetention), checked at most once a minute, on Claim.
	Retention time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu        sync.Mutex
	ids       map[string]*Claim
	lastPrune time.Time
}

// NewMemoryClaims returns an empty MemoryClaims.
func NewMemoryClaims() *MemoryClaims { return &MemoryClaims{ids: map[string]*Claim{}} }

func (c *MemoryClaims) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Claim implements CallClaims.
func (c *MemoryClaims) Claim(_ context.Context, callID, caller, tool string) (*Claim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if now.Sub(c.lastPrune) >= time.Minute {
		c.lastPrune = now
		c.pruneLocked(now.Add(-c.retention()))
	}
	if cl, ok := c.ids[callID]; ok {
		cp := *cl
		return &cp, nil
	}
	c.ids[callID] = &Claim{CallID: callID, Caller: caller, Tool: tool, ClaimedAt: now}
	return nil, nil
}

func (c *MemoryClaims) retention() time.Duration {
	if c.Retention > 0 {
		return c.Retention
	}
	return DefaultClaimRetention
}

// Finish implements CallClaims.
func (c *MemoryClaims) Finish(_ context.Context, callID string, o ClaimOutcome) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.ids[callID]
	if !ok {
		return fmt.Errorf("claims: no claim of call %s to finish (pruned?)", callID)
	}
	cl.Outcome = &o
	return nil
}

// Prune implements CallClaims.
func (c *MemoryClaims) Prune(_ context.Context, before time.Time) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pruneLocked(before), nil
}

func (c *MemoryClaims) pruneLocked(before time.Time) int {
	n := 0
	for id, cl := range c.ids {
		if cl.ClaimedAt.Before(before) {
			delete(c.ids, id)
			n++
		}
	}
	return n
}

// claim runs just before stage 6 (see CallClaims). replay is the first
// attempt's outcome when a retry gets it back instead of running.
func (m *Manager) claim(ctx context.Context, cs *callState) (replay *ClaimOutcome, err error) {
	if m.cfg.Claims == nil || !cs.clientID || cs.entry.tool.Idempotent {
		return nil, nil
	}
	earlier, err := m.cfg.Claims.Claim(ctx, cs.req.CallID, cs.req.Caller, cs.entry.tool.Name)
	if err != nil {
		return nil, fmt.Errorf("pipeline: the call's claim could not be recorded, so it was not run (call it again): %w", err)
	}
	if earlier == nil {
		cs.claimed = true
		return nil, nil
	}
	ac := &AlreadyClaimed{CallID: cs.req.CallID, Tool: cs.entry.tool.Name}
	switch {
	case earlier.Caller != cs.req.Caller:
		ac.OtherCaller = true
		return nil, ac
	case earlier.Outcome == nil:
		// Ask again when the first attempt's budget (this one's, for the
		// same tool) would have run out, within [1 s, 30 s].
		left := time.Until(earlier.ClaimedAt.Add(cs.budget))
		ac.RetryAfterMs = min(max(left, time.Second), 30*time.Second).Milliseconds()
		return nil, ac
	}
	return earlier.Outcome, nil
}

// replayed answers a retry with the first attempt's outcome.
func replayed(o *ClaimOutcome, res *Result) error {
	res.Output, res.Replayed = o.Output, true
	if o.Provider != "" {
		res.Provider, res.Version = o.Provider, o.Version
	}
	if o.Outcome == OutcomeOK {
		return nil
	}
	return &RemoteError{ErrKind: o.ErrorKind, Message: "replayed from the call's first attempt: " + o.Error}
}

// finishClaim records the outcome of the attempt that holds the claim;
// deliver calls it once the audit record is durable, before the answer
// goes out. A failure leaves the claim without outcome (retries are then
// answered AlreadyClaimed): it is logged, the answer still goes out.
func (m *Manager) finishClaim(cs *callState, res *Result, err error) {
	if !cs.claimed {
		return
	}
	o := ClaimOutcome{Outcome: res.Outcome, ErrorKind: res.ErrorKind, Output: res.Output, Provider: res.Provider, Version: res.Version, Latency: res.Latency}
	if err != nil {
		o.Error = err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ferr := m.cfg.Claims.Finish(ctx, cs.req.CallID, o); ferr != nil {
		m.log.Warn("claim outcome not recorded: a retry of this call will be answered already_claimed", "call_id", cs.req.CallID, "err", ferr)
	}
}
