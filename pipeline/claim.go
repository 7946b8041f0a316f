package pipeline

import (
	"context"
	"fmt"
	"sync"
)

// CallClaims makes a retried call run at most once across replicas. A
// client that got no answer (its replica died) retries on another replica
// with the same call_id; without a claim the tool would run again there.
// So, just before stage 6, a call to a tool that is not idempotent whose
// call_id came from the client is claimed: the claim is durable before the
// handler starts (the side effect), and a second claim of the same id
// fails, whichever replica makes it. That call is answered AlreadyClaimed
// without running: the first attempt ran, or is in doubt (its replica died
// between the claim and its audit record); the audit log says which.
//
// Idempotent tools are not claimed (running one twice is harmless, and a
// claim costs a commit), nor are calls whose id the pipeline made up (no
// one can retry an id they never saw).
type CallClaims interface {
	// Claim records callID as started by caller for tool. claimed is false
	// when an earlier claim holds the id; err means the claim could not be
	// recorded, and the call is then not run.
	Claim(ctx context.Context, callID, caller, tool string) (claimed bool, err error)
}

// AlreadyClaimed: an earlier attempt of this call_id claimed it (on this
// replica or another), so this one was not run.
type AlreadyClaimed struct {
	CallID, Tool string
}

func (e *AlreadyClaimed) Error() string {
	return fmt.Sprintf("already claimed: call %s (%s) was started by an earlier attempt and is not run again; the audit log has its outcome, or none if that attempt's replica died before it finished",
		e.CallID, e.Tool)
}
func (e *AlreadyClaimed) Kind() string         { return KindAlreadyClaimed }
func (e *AlreadyClaimed) Is(target error) bool { return target == ErrAlreadyClaimed }

// MemoryClaims is CallClaims for one process: it dedupes retries that come
// back to the same replica, and forgets everything when the process ends
// (replicas share a database's claims: store/pg).
type MemoryClaims struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// NewMemoryClaims returns an empty MemoryClaims.
func NewMemoryClaims() *MemoryClaims { return &MemoryClaims{ids: map[string]struct{}{}} }

// Claim implements CallClaims.
func (c *MemoryClaims) Claim(_ context.Context, callID, _, _ string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.ids[callID]; ok {
		return false, nil
	}
	c.ids[callID] = struct{}{}
	return true, nil
}

// claim runs just before stage 6 (see CallClaims).
func (m *Manager) claim(ctx context.Context, cs *callState) error {
	if m.cfg.Claims == nil || !cs.clientID || cs.entry.tool.Idempotent {
		return nil
	}
	ok, err := m.cfg.Claims.Claim(ctx, cs.req.CallID, cs.req.Caller, cs.entry.tool.Name)
	if err != nil {
		return fmt.Errorf("pipeline: the call's claim could not be recorded, so it was not run (call it again): %w", err)
	}
	if !ok {
		return &AlreadyClaimed{CallID: cs.req.CallID, Tool: cs.entry.tool.Name}
	}
	return nil
}
