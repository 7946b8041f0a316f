// Package guard is AIRS's guard layer: the checks that run beside the Tool
// Manager's stages without any model. Today it is intent verification's
// person (seed 000 §5.3, level 2): a destructive call is held until someone
// confirms it, and calls of the read-only tools the policy names are queued
// for review after the fact while they go ahead.
//
// A Guard plugs into the pipeline as its pipeline.IntentGate
// (pipeline.Config.Gate); pipeline never imports guard. Confirmations,
// reviews and "always" grants live in one file in AIRS_HOME (store.go),
// shared by every airs process, so `airs review approve` in one terminal
// lets through the call a running `airs serve` holds — or, with
// Config.Store, in one document several replicas share (store/pg).
package guard

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Defaults.
const (
	// DefaultExpiry is how long a confirmation waits for a decision, and how
	// long a decision waits for the call to come again.
	DefaultExpiry = 15 * time.Minute
	// DefaultMaxPending bounds the open reviews after the fact; past it a
	// reviewed call still runs but is not queued (and is counted).
	DefaultMaxPending = 1000
	// DefaultMaxPendingPerAgent bounds one agent's open confirmations.
	DefaultMaxPendingPerAgent = 100
	// maxShownParams is how much of a call's params a review keeps to show
	// the reviewer; the hash covers all of them.
	maxShownParams = 4096
	// keepDecided is how long decided, used or expired reviews stay listed.
	keepDecided = 7 * 24 * time.Hour
)

// Kinds of review.
const (
	// KindConfirm: a destructive call held until a person decides
	// (synchronous: the call answers intent_verification_required).
	KindConfirm = "confirm"
	// KindReview: a call of a reviewed read-only tool that went ahead
	// (asynchronous: a person looks at it afterwards).
	KindReview = "review"
)

// Statuses of a review.
const (
	StatusPending  = "pending"
	StatusApproved = "approved" // once: the same call, sent again, runs once
	StatusAlways   = "always"   // every call of the tool by the agent runs
	StatusDenied   = "denied"
	StatusExpired  = "expired" // a confirmation nobody decided in time
)

// Choice is a person's answer to a confirmation.
type Choice int

const (
	Once   Choice = iota + 1 // allow this call, once
	Always                   // allow every call of this tool by this agent
	Deny                     // refuse this call
)

// Review is one confirmation or review.
type Review struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"` // KindConfirm or KindReview
	Caller   string `json:"caller"`
	Provider string `json:"provider"`
	Tool     string `json:"tool"`
	// ParamsSHA256 identifies the call: an approval lets through only a
	// call with the same caller, tool and params (compacted JSON).
	ParamsSHA256 string `json:"params_sha256"`
	// Params are the call's params as the reviewer sees them, cut at 4 KiB
	// (ParamsCut says so).
	Params    json.RawMessage `json:"params,omitempty"`
	ParamsCut bool            `json:"params_cut,omitempty"`
	CallID    string          `json:"call_id,omitempty"` // the call that asked
	Intent    string          `json:"intent,omitempty"`  // the user's words, when the channel had them
	Created   time.Time       `json:"created"`
	// Expires: a confirmation's decision must come before it, and the call
	// come again before it once decided. Zero for reviews after the fact.
	Expires   time.Time `json:"expires,omitzero"`
	Status    string    `json:"status"`
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
	// Used is when the decided call came again and the decision was
	// applied (a confirmation's decision applies once).
	Used time.Time `json:"used,omitzero"`
	// Anomaly is the call's anomaly score (0–1) when that is why it is
	// here (at or above the review or block threshold), AnomalyModel the
	// model's version.
	Anomaly      float64 `json:"anomaly,omitempty"`
	AnomalyModel string  `json:"anomaly_model,omitempty"`
	// Reason is level 2's reason when that is why it is here: the flow a
	// person approves ("delete-file path came from the text of
	// documents/invoice.pdf"), or the intent verifier's judgement; and
	// Provenance where each argument came from.
	Reason     string              `json:"reason,omitempty"`
	Provenance map[string][]string `json:"provenance,omitempty"`
}

// Grant is an "always" answer: Caller may call Tool without asking.
type Grant struct {
	Caller string    `json:"caller"`
	Tool   string    `json:"tool"`
	By     string    `json:"by"`
	At     time.Time `json:"at"`
	Review string    `json:"review"` // the confirmation it answered
}

// Config configures a Guard.
type Config struct {
	// Dir holds the store (reviews.json); created if missing. Required
	// unless Store is set.
	Dir string
	// Store, when set, keeps the reviews and grants instead of Dir's
	// reviews.json (store/pg: shared by the replicas on one database).
	Store StateStore
	// ReviewTools are the read-only tools whose calls are queued for review
	// after the fact (guard.review_tools in airs.yaml).
	ReviewTools []string
	// Reviewers are the agents who may decide over HTTP and in the
	// attention page (guard.reviewers). The local CLI (`airs review`, the
	// prompt of `airs call` and `airs chat`) is the operator and always
	// may.
	Reviewers []string
	// Expiry is DefaultExpiry when 0.
	Expiry time.Duration
	// MaxPending is DefaultMaxPending when 0.
	MaxPending int
	// MaxPendingPerAgent bounds one agent's confirmations waiting for a
	// person (DefaultMaxPendingPerAgent when 0): past it a new call that
	// would be held is refused, saying why, so an agent whose calls are
	// all held cannot grow the store without bound.
	MaxPendingPerAgent int
	// Logger gets store failures and dropped reviews; nil discards.
	Logger *slog.Logger
	// Now is time.Now when nil (tests move it).
	Now func() time.Time
}

// Guard is the intent gate. It is safe for concurrent use, and several
// processes may share one Dir.
type Guard struct {
	cfg       Config
	review    map[string]bool // immutable after New: read without a lock
	reviewers map[string]bool
	log       *slog.Logger

	mu      sync.Mutex // one read-change-write at a time in this process
	dropped int

	// The file store's state as this process last read it (store.go).
	cache      *state
	snap       snapStamp
	journalOff int64
	pruned     time.Time

	crashBeforeRename func() bool // tests
	crashMidAppend    func() bool // tests
}

// New makes a Guard over cfg.Dir.
func New(cfg Config) (*Guard, error) {
	if cfg.Store == nil {
		if cfg.Dir == "" {
			return nil, errors.New("guard: Config.Dir (or Config.Store) is required")
		}
		if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
			return nil, fmt.Errorf("guard: %w", err)
		}
	}
	if cfg.Expiry <= 0 {
		cfg.Expiry = DefaultExpiry
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.MaxPendingPerAgent <= 0 {
		cfg.MaxPendingPerAgent = DefaultMaxPendingPerAgent
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	g := &Guard{cfg: cfg, review: map[string]bool{}, reviewers: map[string]bool{}, log: cfg.Logger}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, t := range cfg.ReviewTools {
		g.review[t] = true
	}
	for _, a := range cfg.Reviewers {
		g.reviewers[a] = true
	}
	// Read once now, so a broken store is reported at start, not on the
	// first destructive call.
	if err := g.withState(func(*state) (bool, error) { return false, nil }); err != nil {
		return nil, err
	}
	return g, nil
}

// CanReview reports whether agent may decide reviews over HTTP and in the
// attention page.
func (g *Guard) CanReview(agent string) bool { return g.reviewers[agent] }

// Expiry is how long a confirmation waits.
func (g *Guard) Expiry() time.Duration { return g.cfg.Expiry }

// Dropped counts reviewed calls that ran without being queued because the
// queue was full or the store failed.
func (g *Guard) Dropped() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dropped
}

var _ pipeline.IntentGate = (*Guard)(nil)

// Gate is the pipeline's intent gate (pipeline.IntentGate). A call of a
// tool that is neither destructive nor reviewed, and whose anomaly score
// is below the review threshold, passes at once, without touching the
// store. A call scoring at or above the block threshold is held as a
// destructive one is (confirmed once, always for the agent and tool, or
// denied); one at or above the review threshold is queued as a reviewed
// tool's call is.
//
// A call the gate would hold is asked about instead when ctx has an
// Asker (WithAsker): the person's answer decides its confirmation, and
// the call runs or is refused now.
func (g *Guard) Gate(ctx context.Context, c pipeline.IntentCheck) (pipeline.IntentDecision, error) {
	switch {
	case c.Tool.Destructive || c.Anomaly >= pipeline.AnomalyBlock || c.Hold != "":
		d, err := g.confirm(c)
		var held *pipeline.IntentVerificationRequired
		if errors.As(err, &held) && g.askAbout(ctx, c, held) {
			return g.confirm(c) // the decision just recorded, met as a call sent again meets it
		}
		return d, err
	case g.review[c.Tool.Name] || c.Anomaly == pipeline.AnomalyReview || c.Flag != "":
		return g.queue(c), nil
	}
	return pipeline.IntentDecision{}, nil
}

// confirm is the synchronous gate of a destructive call.
func (g *Guard) confirm(c pipeline.IntentCheck) (d pipeline.IntentDecision, err error) {
	sum := ParamsHash(c.Params)
	now := g.cfg.Now()
	serr := g.withState(func(st *state) (bool, error) {
		// An "always" grant answers the intent question (may this agent
		// call this destructive tool?); it does not vouch for what the
		// calls do, so a call the anomaly gate holds is held with one too.
		if gr := findGrant(st, c.Caller, c.Tool.Name); gr != nil && c.Anomaly < pipeline.AnomalyBlock && c.Hold == "" {
			d = pipeline.IntentDecision{Decision: pipeline.IntentAlways, Review: gr.Review, Reviewer: gr.By}
			return false, nil
		}
		same := st.confirmsOf(c.Caller, c.Tool.Name, sum)
		for k := len(same) - 1; k >= 0; k-- {
			r := &st.Reviews[same[k]]
			if !r.Used.IsZero() || !now.Before(r.Expires) {
				continue
			}
			switch r.Status {
			case StatusApproved, StatusAlways:
				if c.Hold != "" && r.Reason != c.Hold {
					continue // approved without seeing the flow level 2 holds it for
				}
				r.Used = now
				st.touch(r.ID)
				d = pipeline.IntentDecision{Decision: pipeline.IntentApproved, Review: r.ID, Reviewer: r.DecidedBy}
				return true, nil
			case StatusDenied:
				r.Used = now
				st.touch(r.ID)
				d = pipeline.IntentDecision{Decision: pipeline.IntentDenied, Review: r.ID, Reviewer: r.DecidedBy}
				err = &pipeline.IntentMisaligned{Reason: fmt.Sprintf("%s denied this call of %s (confirmation %s)", r.DecidedBy, r.Tool, r.ID),
					DeniedBy: r.DecidedBy, Review: r.ID}
				return true, nil
			case StatusPending: // asked already: the same confirmation, not a second one
				d = pipeline.IntentDecision{Decision: pipeline.IntentRequired, Review: r.ID}
				err = &pipeline.IntentVerificationRequired{ID: r.ID, Caller: r.Caller, Tool: r.Tool, Expires: r.Expires}
				return false, nil
			}
		}
		if n := pendingOf(st, c.Caller, now); n >= g.cfg.MaxPendingPerAgent {
			err = &pipeline.IntentMisaligned{Reason: fmt.Sprintf("%s has %d confirmations waiting for a person, the most the guard keeps for one agent; nothing new is held for it until some are decided (`airs review`) or expire (after %s)",
				c.Caller, n, g.cfg.Expiry)}
			d = pipeline.IntentDecision{Decision: pipeline.IntentDenied}
			return false, nil
		}
		r := g.newReview(KindConfirm, c, sum, now)
		r.Expires = now.Add(g.cfg.Expiry)
		st.add(r)
		d = pipeline.IntentDecision{Decision: pipeline.IntentRequired, Review: r.ID}
		err = &pipeline.IntentVerificationRequired{ID: r.ID, Caller: r.Caller, Tool: r.Tool, Expires: r.Expires}
		return true, nil
	})
	if serr != nil { // fail closed: a destructive call does not run unconfirmed
		g.log.Error("guard: review store failed: destructive call refused", "tool", c.Tool.Name, "caller", c.Caller, "err", serr)
		return pipeline.IntentDecision{}, &pipeline.IntentMisaligned{Reason: "the guard cannot record a confirmation: " + serr.Error()}
	}
	return d, err
}

// queue is the asynchronous gate: the call goes ahead, queued for review.
func (g *Guard) queue(c pipeline.IntentCheck) pipeline.IntentDecision {
	now := g.cfg.Now()
	var d pipeline.IntentDecision
	full := false
	err := g.withState(func(st *state) (bool, error) {
		open := 0
		for _, r := range st.Reviews {
			if r.Kind == KindReview && r.Status == StatusPending {
				open++
			}
		}
		if open >= g.cfg.MaxPending {
			full = true
			return false, nil
		}
		r := g.newReview(KindReview, c, ParamsHash(c.Params), now)
		st.add(r)
		d = pipeline.IntentDecision{Decision: pipeline.IntentQueued, Review: r.ID}
		return true, nil
	})
	if err != nil || full { // fail open: a read-only call is reviewed, not held
		g.mu.Lock()
		g.dropped++
		g.mu.Unlock()
		g.log.Warn("guard: a reviewed call ran without being queued", "tool", c.Tool.Name, "caller", c.Caller,
			"queue_full", full, "err", err)
		return pipeline.IntentDecision{}
	}
	return d
}

func (g *Guard) newReview(kind string, c pipeline.IntentCheck, sum string, now time.Time) Review {
	prefix := "cf-"
	if kind == KindReview {
		prefix = "rv-"
	}
	r := Review{ID: prefix + randomID(), Kind: kind, Caller: c.Caller, Provider: c.Provider, Tool: c.Tool.Name,
		ParamsSHA256: sum, CallID: c.CallID, Intent: c.Intent, Created: now, Status: StatusPending,
		Reason: c.Hold + c.Flag, Provenance: c.Labels.Strings()}
	if c.Anomaly >= pipeline.AnomalyReview {
		r.Anomaly, r.AnomalyModel = pipeline.AnomalyScoreOf(c.AnomalyScore), c.AnomalyModel
	}
	if len(c.Params) <= maxShownParams && json.Valid(c.Params) {
		r.Params = compact(c.Params)
	} else {
		r.ParamsCut = true
	}
	return r
}

// ParamsHash identifies a call's params: the SHA-256 of their compacted
// JSON, so the same call sent again with other white space is the same call.
func ParamsHash(params json.RawMessage) string {
	sum := sha256.Sum256(compact(params))
	return hex.EncodeToString(sum[:])
}

func compact(p json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, p); err != nil {
		return p
	}
	return buf.Bytes()
}

func randomID() string {
	var b [10]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func findGrant(st *state, caller, tool string) *Grant {
	for i := range st.Grants {
		if st.Grants[i].Caller == caller && st.Grants[i].Tool == tool {
			return &st.Grants[i]
		}
	}
	return nil
}

// Errors of Decide.
var (
	ErrNotFound = errors.New("no such review")
	ErrDecided  = errors.New("review already decided")
	ErrExpired  = errors.New("confirmation expired")
)

// Decide answers review id as by: Once or Always approve, Deny refuses. A
// confirmation's decision applies to the same call sent again before it
// expires (Expiry from now); Always also grants every later call of the
// tool by the agent. A review after the fact takes Once (looked at, fine)
// or Deny (flagged); Always is for confirmations only.
func (g *Guard) Decide(id string, ch Choice, by string) (Review, error) {
	now := g.cfg.Now()
	var out Review
	err := g.withState(func(st *state) (bool, error) {
		i, ok := st.find(id)
		if !ok {
			return false, fmt.Errorf("%w: %s (`airs review` lists the open ones)", ErrNotFound, id)
		}
		r := &st.Reviews[i]
		if r.Status != StatusPending {
			out = *r
			return false, fmt.Errorf("%w: %s is %s by %s", ErrDecided, id, r.Status, r.DecidedBy)
		}
		if r.Kind == KindConfirm && !now.Before(r.Expires) {
			out = withExpiry(*r, now)
			return false, fmt.Errorf("%w: %s expired at %s; the call asks again when it is sent again", ErrExpired, id, r.Expires.UTC().Format(time.RFC3339))
		}
		if ch == Always && r.Kind != KindConfirm {
			return false, fmt.Errorf("%s is a review after the fact: approve or deny it (\"always\" is for confirmations)", id)
		}
		r.DecidedBy, r.DecidedAt = by, now
		st.touch(r.ID)
		switch ch {
		case Once:
			r.Status = StatusApproved
		case Always:
			r.Status = StatusAlways
			if findGrant(st, r.Caller, r.Tool) == nil {
				st.Grants = append(st.Grants, Grant{Caller: r.Caller, Tool: r.Tool, By: by, At: now, Review: r.ID})
				st.grantsTouched = true
			}
		case Deny:
			r.Status = StatusDenied
		default:
			return false, fmt.Errorf("guard: unknown choice %d", ch)
		}
		if r.Kind == KindConfirm {
			r.Expires = now.Add(g.cfg.Expiry) // time for the call to come again
		}
		out = *r
		return true, nil
	})
	return out, err
}

// Answer records a person's answer given before the call is made, where
// no asker can reach the gate that will meet the call (a plan's step run
// on the chain workers; a plan step's denial, which stops the plan before
// the call): a decided confirmation for exactly this call, which the call
// then meets in the gate. A channel that can ask puts an Asker on the
// call's context instead (WithAsker). It returns the confirmation.
func (g *Guard) Answer(caller, provider, tool string, params json.RawMessage, intent string, ch Choice, by string) (Review, error) {
	now := g.cfg.Now()
	t := pipeline.Tool{Name: tool, Destructive: true}
	r := g.newReview(KindConfirm, pipeline.IntentCheck{Caller: caller, Provider: provider, Tool: &t, Params: params, Intent: intent}, ParamsHash(params), now)
	r.Expires = now.Add(g.cfg.Expiry)
	err := g.withState(func(st *state) (bool, error) {
		st.add(r)
		return true, nil
	})
	if err != nil {
		return Review{}, err
	}
	return g.Decide(r.ID, ch, by)
}

// Granted reports whether caller holds an "always" grant for tool.
func (g *Guard) Granted(caller, tool string) bool {
	found := false
	err := g.withState(func(st *state) (bool, error) {
		found = findGrant(st, caller, tool) != nil
		return false, nil
	})
	return err == nil && found
}

// Filter selects reviews for List.
type Filter struct {
	Caller string // "" any
	All    bool   // decided and expired ones too, not only the open ones
	// Offset skips that many of the selected reviews (newest first) and
	// Limit, when positive, returns at most that many: a page.
	Offset, Limit int
}

// List returns the reviews f selects, newest first. A confirmation past its
// expiry shows as StatusExpired.
func (g *Guard) List(f Filter) ([]Review, error) {
	now := g.cfg.Now()
	var out []Review
	err := g.withState(func(st *state) (bool, error) {
		for i := len(st.Reviews) - 1; i >= 0; i-- { // newest first: the store is in creation order
			r := withExpiry(st.Reviews[i], now)
			if f.Caller != "" && r.Caller != f.Caller {
				continue
			}
			if !f.All && r.Status != StatusPending {
				continue
			}
			if f.Offset > 0 {
				f.Offset--
				continue
			}
			if f.Limit > 0 && len(out) >= f.Limit {
				break
			}
			out = append(out, r)
		}
		return false, nil
	})
	return out, err
}

// Get returns one review.
func (g *Guard) Get(id string) (Review, error) {
	now := g.cfg.Now()
	var out Review
	found := false
	err := g.withState(func(st *state) (bool, error) {
		if i, ok := st.find(id); ok {
			out, found = withExpiry(st.Reviews[i], now), true
		}
		return false, nil
	})
	if err != nil {
		return Review{}, err
	}
	if !found {
		return Review{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return out, nil
}

// pendingOf is how many confirmations of caller wait for a person now.
func pendingOf(st *state, caller string, now time.Time) int {
	n := 0
	for _, i := range st.confirmsBy(caller) {
		if r := &st.Reviews[i]; r.Status == StatusPending && now.Before(r.Expires) {
			n++
		}
	}
	return n
}

// Grants lists the "always" grants.
func (g *Guard) Grants() ([]Grant, error) {
	var out []Grant
	err := g.withState(func(st *state) (bool, error) {
		out = slices.Clone(st.Grants)
		return false, nil
	})
	return out, err
}

// Revoke removes caller's "always" grant for tool; false when there was none.
func (g *Guard) Revoke(caller, tool string) (bool, error) {
	found := false
	err := g.withState(func(st *state) (bool, error) {
		n := len(st.Grants)
		st.Grants = slices.DeleteFunc(st.Grants, func(gr Grant) bool { return gr.Caller == caller && gr.Tool == tool })
		found = len(st.Grants) < n
		st.grantsTouched = found
		return found, nil
	})
	return found, err
}

func withExpiry(r Review, now time.Time) Review {
	if r.Kind == KindConfirm && r.Status == StatusPending && !now.Before(r.Expires) {
		r.Status = StatusExpired
	}
	return r
}

// prune drops what no one needs any more, so the store stays small: a
// confirmation that expired undecided at once (nobody can decide it any
// more, and the call asks again when it is sent again), and other reviews
// no longer open whose last event (decided, used, expired) is more than a
// week old.
func (g *Guard) prune(st *state) {
	now := g.cfg.Now()
	st.deleteFunc(func(r Review) bool {
		switch withExpiry(r, now).Status {
		case StatusPending:
			return false
		case StatusExpired:
			return true
		}
		last := r.Created
		for _, t := range []time.Time{r.DecidedAt, r.Used, r.Expires} {
			if t.After(last) {
				last = t
			}
		}
		return now.Sub(last) > keepDecided
	})
}
