package httpapi

import (
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/server"
)

var (
	_ server.ReviewBackend = backend{}
	_ server.ReviewBackend = recBackend{}
)

// GuardEnabled: the engine has a guard (guard.enabled).
func (b backend) GuardEnabled() bool { return b.e.Guard() != nil }

// CanReview: caller is one of guard.reviewers.
func (b backend) CanReview(caller string) bool {
	g := b.e.Guard()
	return g != nil && g.CanReview(caller)
}

// Reviews are every review for a reviewer, the caller's own otherwise.
func (b backend) Reviews(caller string, all bool) ([]guard.Review, error) {
	g := b.e.Guard()
	if g == nil {
		return nil, server.ErrNoGuard
	}
	f := guard.Filter{All: all}
	if !g.CanReview(caller) {
		f.Caller = caller
	}
	return g.List(f)
}

// DecideReview decides as caller, a reviewer (the server checked), named
// "http:<agent>" in the store and the audit record. A reviewer may deny
// its own held call but approves it only when guard.self_approve says so:
// otherwise a reviewer's token alone would run its destructive calls with
// nobody else looking.
func (b backend) DecideReview(caller, id string, ch guard.Choice) (guard.Review, error) {
	g := b.e.Guard()
	if g == nil {
		return guard.Review{}, server.ErrNoGuard
	}
	if ch != guard.Deny && !b.e.SelfApprove() {
		rv, err := g.Get(id)
		if err != nil {
			return guard.Review{}, err
		}
		if rv.Caller == caller {
			return guard.Review{}, server.ErrSelfApproval
		}
	}
	return g.Decide(id, ch, "http:"+caller)
}

var _ server.GrantBackend = backend{}

// Grants are the guard's standing "always" answers.
func (b backend) Grants() ([]guard.Grant, error) {
	g := b.e.Guard()
	if g == nil {
		return nil, server.ErrNoGuard
	}
	return g.Grants()
}

// RevokeGrant removes agent's grant for tool (by, a reviewer, the server
// checked).
func (b backend) RevokeGrant(by, agent, tool string) (bool, error) {
	g := b.e.Guard()
	if g == nil {
		return false, server.ErrNoGuard
	}
	return g.Revoke(agent, tool)
}
