package recommender

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// Urgency of every recommendation: suggestions are shown, never pushed.
const UrgencyLow = "low"

// Recommendation is one suggestion: a call AIRS thinks the caller may want,
// with arguments that pass the tool's schema. It is never run by the
// recommender; a channel runs it through the pipeline when the user accepts.
type Recommendation struct {
	ID         string          `json:"id"`
	Caller     string          `json:"-"`
	Tool       string          `json:"tool"`
	Provider   string          `json:"provider"`
	Arguments  json.RawMessage `json:"arguments"`
	Score      float64         `json:"score"`
	Signals    []SignalReason  `json:"signals"`
	Reason     string          `json:"reason"`
	Urgency    string          `json:"urgency"`
	Context    string          `json:"context"` // what a dismissal is remembered under
	Idempotent bool            `json:"idempotent"`
	// Destructive: running it may destroy something; it is confirmed first.
	Destructive bool      `json:"destructive"`
	Created     time.Time `json:"created"`
	Expires     time.Time `json:"expires"`
	Seen        bool      `json:"seen"`

	features Features
	text     string // the text behind it, for the text model's learning
	key      string // callKey: what makes two suggestions, or a suggestion and a call, the same
}

// SignalReason is one signal behind a recommendation.
type SignalReason struct {
	Signal string  `json:"signal"`
	Score  float64 `json:"score"`
	Why    string  `json:"why"`
}

// Update is what a subscriber receives.
type Update struct {
	Type           string          `json:"type"` // "new", "expired", "accepted", "dismissed"
	Recommendation *Recommendation `json:"recommendation"`
}

// Config configures a Recommender; zero values take the defaults in brackets.
type Config struct {
	Catalog  selector.Catalog                           // the caller's callable tools (required)
	Validate func(pipeline.Tool, json.RawMessage) error // the pipeline's schema stage (required)
	Spaces   []string                                   // configured space names, for argument hints
	// FileExists reports whether a space holds a file: a suggestion's path
	// must name one that is there (nil: a file name is enough).
	FileExists func(space, path string) bool
	// Env is what a caller's task and requests are read against (the
	// spaces it may read and their files' names), so that "the attention
	// paper" is the file it names (nil: the configured spaces, no files).
	Env func(caller string) understand.Env

	Home        string        // where learning is kept ("" keeps nothing)
	Store       Store         // instead of Home's files: learning kept elsewhere (store/pg), shared by replicas
	TTL         time.Duration // a recommendation's life [10 min]
	PerMinute   int           // new recommendations per caller per minute [6]
	MaxActive   int           // live recommendations per caller [5]
	Threshold   float64       // the fused score a candidate needs [0.35]
	Cooldown    time.Duration // after a dismissal, that tool in that context rests [1 h]
	SuppressAt  int           // dismissals in one context that suppress the tool there [3]
	SuppressFor time.Duration // how long [30 days]
	HalfLife    time.Duration // the history model's time decay [7 days]
	FileWindow  time.Duration // a file event counts as context this long [10 min]
	// AfterCall, when set, is called by Run after each call event has been
	// observed, so the caller's suggestions are already updated for it
	// (the engine's speculation reads them then).
	AfterCall func(pipeline.CallEvent)
	Logger    *slog.Logger
	Now       func() time.Time
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.TTL, 10*time.Minute)
	def(&c.Cooldown, time.Hour)
	def(&c.SuppressFor, 30*24*time.Hour)
	def(&c.HalfLife, 7*24*time.Hour)
	def(&c.FileWindow, 10*time.Minute)
	if c.PerMinute <= 0 {
		c.PerMinute = 6
	}
	if c.MaxActive <= 0 {
		c.MaxActive = 5
	}
	if c.Threshold <= 0 {
		c.Threshold = 0.35
	}
	if c.SuppressAt <= 0 {
		c.SuppressAt = 3
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Bounds on what one caller's context holds and on the learning kept.
const (
	maxTurns       = 5
	maxRecent      = 10
	maxFiles       = 16
	maxCallers     = 1024
	maxSuppression = 10_000
	maxTextObs     = 2_000
	subBuffer      = 64
	maxBuilds      = 16
)

// ErrNotFound is a recommendation id that is not (or no longer) live.
var ErrNotFound = errors.New("recommendation not found (it expired, or was accepted or dismissed)")

// Recommender turns context signals into recommendations and learns from
// the answers. It is safe for concurrent use.
type Recommender struct {
	cfg Config

	mu       sync.Mutex
	fusion   *Fusion
	history  *History
	text     *TextModel
	textKey  string // the tool set the text model was built for
	textObs  []textObs
	callers  map[string]*callerState
	suppress map[string]*suppression // by caller \x00 context \x00 tool
	subs     map[*subscriber]struct{}
	// parsed holds one update's readings of its texts (r.mu held).
	parsed  map[string]*understand.Interpretation
	infos   map[string]*toolInfo
	scratch [3]map[string]float64 // update's score maps, reused
	cands   []candidate           // update's candidates, reused
	store   *store
	stats   Stats

	ids atomic.Uint64
}

type callerState struct {
	task       string
	turns      []string
	recent     []pipeline.CallEvent
	recentKeys []string   // callKey of each of recent
	made       []madeCall // the calls the caller made lately, told by Done or the pipeline (sameAsMade)
	files      []FileEvent
	active     []*Recommendation
	denied     []string // callKeys of calls the person denied: never suggested again
	issued     []time.Time
	lastTouch  time.Time
	catalog    *callerCatalog
}

type suppression struct {
	Dismissals int       `json:"dismissals"`
	Until      time.Time `json:"until"`
}

type textObs struct {
	Text string `json:"text"`
	Tool string `json:"tool"`
}

type subscriber struct {
	caller string
	ch     chan Update
	closed bool // cut off by publish (r.mu)
}

// Stats are counters for /metrics and tests.
type Stats struct {
	Updates, Issued, Accepted, Dismissed, Ignored, RateLimited, Suppressed, Invalid, SubscriberDrops uint64
}

// FileEvent is activity on a file in a space (from the watcher, or a
// client saying it opened the file).
type FileEvent struct {
	Space string
	Rel   string // slash-separated, inside the space
	Op    string // create, write, open …
	At    time.Time
	// Also names the same file in other spaces, when spaces nest or share
	// a folder: each caller is told of it under a name it may read.
	Also []FileName
}

// FileName is a file's name in one space.
type FileName struct {
	Space string
	Rel   string // slash-separated, inside the space
}

// names is every name of the file, its own first.
func (f FileEvent) names() []FileName {
	return append([]FileName{{Space: f.Space, Rel: f.Rel}}, f.Also...)
}

// sameFile reports whether a and b name one file (under any of their names).
func sameFile(a, b FileEvent) bool {
	for _, x := range a.names() {
		if slices.Contains(b.names(), x) {
			return true
		}
	}
	return false
}

// New builds a recommender and loads what an earlier run learned from
// cfg.Home.
func New(cfg Config) (*Recommender, error) {
	if cfg.Catalog == nil || cfg.Validate == nil {
		return nil, errors.New("recommender: Config.Catalog and Config.Validate are required")
	}
	r := &Recommender{cfg: cfg.withDefaults(), fusion: NewFusion(), callers: map[string]*callerState{},
		suppress: map[string]*suppression{}, subs: map[*subscriber]struct{}{}, infos: map[string]*toolInfo{},
		scratch: [3]map[string]float64{{}, {}, {}}}
	r.history = NewHistory(r.cfg.HalfLife)
	var st *store
	switch {
	case cfg.Store != nil:
		st = openExtStore(cfg.Store)
	case cfg.Home != "":
		var err error
		if st, err = openStore(cfg.Home); err != nil {
			return nil, err
		}
	}
	if st != nil {
		r.store = st
		if err := st.load(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Stats returns the counters.
func (r *Recommender) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Recommender) caller(name string) *callerState {
	cs := r.callers[name]
	if cs == nil {
		if len(r.callers) >= maxCallers {
			r.evictCaller()
		}
		cs = &callerState{}
		r.callers[name] = cs
	}
	cs.lastTouch = r.cfg.Now()
	return cs
}

func (r *Recommender) evictCaller() {
	var oldest string
	var t time.Time
	for n, cs := range r.callers {
		if oldest == "" || cs.lastTouch.Before(t) {
			oldest, t = n, cs.lastTouch
		}
	}
	delete(r.callers, oldest)
}

// Known makes caller one whose context file events reach (a channel calls
// it for the agents it serves).
func (r *Recommender) Known(caller string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.caller(caller)
}

// SetTask sets the caller's task text ("" clears it), keeps it for other
// processes, and recomputes.
func (r *Recommender) SetTask(caller, task string) error {
	task, err := normalizeTask(task)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store != nil {
		if err := r.store.writeTask(caller, task, r.cfg.Now()); err != nil {
			return err
		}
		r.store.markTasksRead()
	}
	cs := r.caller(caller)
	if cs.task != task {
		cs.task = task
		r.update(caller, cs)
	}
	return nil
}

// Task is the caller's task text.
func (r *Recommender) Task(caller string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cs := r.callers[caller]; cs != nil {
		return cs.task
	}
	return ""
}

// ObserveTurn adds a user turn of the caller's conversation.
func (r *Recommender) ObserveTurn(caller, text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(caller)
	cs.turns = appendBounded(cs.turns, text, maxTurns)
	r.update(caller, cs)
}

// ObserveCall takes a delivered call: the caller's recent actions, and the
// history model's next observation.
func (r *Recommender) ObserveCall(ev pipeline.CallEvent) {
	// The call's key and arguments are read before the lock: every
	// caller's calls wait on it (Done), and one caller's large arguments
	// must not hold them up.
	k := callKey(ev.Tool, ev.Params)
	made := newMadeCall(ev.Tool, ev.Params, ev.At, r.cfg.Now())
	if len(ev.Params) > maxObservedParams {
		ev.Params = nil // never carried into a suggestion
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(ev.Caller)
	if ev.Outcome == pipeline.OutcomeOK {
		r.history.Observe(names(cs.recent), ev.Tool, ev.At)
	}
	if ev.ErrorKind == pipeline.KindIntentMisaligned || ev.ErrorKind == pipeline.KindIntentVerificationRequired {
		r.deny(cs, k)
	}
	cs.recent = appendBounded(cs.recent, ev, maxRecent)
	if i := slices.Index(cs.recentKeys, k); i >= 0 {
		cs.recentKeys = slices.Delete(cs.recentKeys, i, i+1) // told by Done already: once, newest
	}
	cs.recentKeys = appendBounded(cs.recentKeys, k, maxRecent)
	if ev.Outcome == pipeline.OutcomeOK { // a call that failed showed the person nothing
		cs.made = addMade(cs.made, made)
	}
	// A call of a recommended tool with the same arguments is that
	// recommendation taken: it is no longer a suggestion; nor is one a
	// call that answered repeats in other words (sameAsMade).
	cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool {
		return rec.key == k || ev.Outcome == pipeline.OutcomeOK && made.repeats(rec.Tool, rec.Arguments)
	})
	r.update(ev.Caller, cs)
}

// Done tells the recommender at once that the caller made a call (the
// pipeline's event of it arrives later, through Run): a live suggestion of
// that very call is withdrawn, and it is not suggested again, before the
// channel shows the suggestions after the turn that made it.
func (r *Recommender) Done(caller, tool string, params json.RawMessage) {
	key := callKey(tool, params)
	now := r.cfg.Now()
	made := newMadeCall(tool, params, now, now)
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(caller)
	if !slices.Contains(cs.recentKeys, key) {
		cs.recentKeys = appendBounded(cs.recentKeys, key, maxRecent)
	}
	cs.made = addMade(cs.made, made)
	cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool {
		if rec.key != key && !made.repeats(rec.Tool, rec.Arguments) {
			return false
		}
		r.publish(rec.Caller, Update{Type: "expired", Recommendation: rec})
		return true
	})
}

// Denied tells the recommender the person denied a call (a destructive
// call declined when asked): that call is never suggested again, and a
// live suggestion of it is withdrawn.
func (r *Recommender) Denied(caller, tool string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deny(r.caller(caller), callKey(tool, params))
}

func (r *Recommender) deny(cs *callerState, key string) {
	if !slices.Contains(cs.denied, key) {
		cs.denied = appendBounded(cs.denied, key, maxDenied)
	}
	cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool {
		if rec.key != key {
			return false
		}
		r.publish(rec.Caller, Update{Type: "expired", Recommendation: rec})
		return true
	})
}

// maxDenied bounds the denied calls remembered per caller.
const maxDenied = 64

// ObserveFile takes a file event for every known caller (the catalog
// decides who may see the space, and under which of the file's names).
func (r *Recommender) ObserveFile(ev FileEvent) {
	if ev.At.IsZero() {
		ev.At = r.cfg.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, cs := range r.callers {
		cs.files = slices.DeleteFunc(cs.files, func(f FileEvent) bool { return sameFile(f, ev) })
		cs.files = appendBounded(cs.files, ev, maxFiles)
		r.update(name, cs)
	}
}

// ObserveFileFor takes a file event that is one caller's own context (a
// client saying it opened the file): the other callers sharing the space
// are not told, so one agent's openings never spend another's suggestions.
func (r *Recommender) ObserveFileFor(caller string, ev FileEvent) {
	if ev.At.IsZero() {
		ev.At = r.cfg.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(caller)
	cs.files = slices.DeleteFunc(cs.files, func(f FileEvent) bool { return sameFile(f, ev) })
	cs.files = appendBounded(cs.files, ev, maxFiles)
	r.update(caller, cs)
}

// Run consumes the pipeline's call events and expires recommendations
// until ctx ends.
func (r *Recommender) Run(ctx context.Context, calls <-chan pipeline.CallEvent) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-calls:
			if !ok {
				calls = nil
				continue
			}
			r.ObserveCall(ev)
			if r.cfg.AfterCall != nil {
				r.cfg.AfterCall(ev)
			}
		case <-tick.C:
			r.Sweep()
		}
	}
}

// Sweep expires recommendations past their time, as ignored, and picks up
// task texts another process set.
func (r *Recommender) Sweep() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reloadTasks()
	r.catchUpShared()
	now := r.cfg.Now()
	for _, cs := range r.callers {
		cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool {
			if now.Before(rec.Expires) {
				return false
			}
			r.feedback(rec, Ignored)
			r.publish(rec.Caller, Update{Type: "expired", Recommendation: rec})
			return true
		})
	}
}

// List returns the caller's live recommendations, best first, and marks
// them seen.
func (r *Recommender) List(caller string) []Recommendation {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(caller)
	out := make([]Recommendation, 0, len(cs.active))
	for _, rec := range cs.active {
		rec.Seen = true
		out = append(out, *rec)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// Close keeps what was learned.
func (r *Recommender) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.store == nil {
		return nil
	}
	return r.store.snapshot(r)
}
