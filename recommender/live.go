package recommender

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
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
	Created    time.Time       `json:"created"`
	Expires    time.Time       `json:"expires"`
	Seen       bool            `json:"seen"`

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

	Home        string        // where learning is kept ("" keeps nothing)
	TTL         time.Duration // a recommendation's life [10 min]
	PerMinute   int           // new recommendations per caller per minute [6]
	MaxActive   int           // live recommendations per caller [5]
	Threshold   float64       // the fused score a candidate needs [0.35]
	Cooldown    time.Duration // after a dismissal, that tool in that context rests [1 h]
	SuppressAt  int           // dismissals in one context that suppress the tool there [3]
	SuppressFor time.Duration // how long [30 days]
	HalfLife    time.Duration // the history model's time decay [7 days]
	FileWindow  time.Duration // a file event counts as context this long [10 min]
	Logger      *slog.Logger
	Now         func() time.Time
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
	infos    map[string]*toolInfo
	scratch  [3]map[string]float64 // update's score maps, reused
	cands    []candidate           // update's candidates, reused
	store    *store
	stats    Stats

	ids atomic.Uint64
}

type callerState struct {
	task       string
	turns      []string
	recent     []pipeline.CallEvent
	recentKeys []string // callKey of each of recent
	files      []FileEvent
	active     []*Recommendation
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
	if cfg.Home != "" {
		st, err := openStore(cfg.Home)
		if err != nil {
			return nil, err
		}
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
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(ev.Caller)
	if ev.Outcome == pipeline.OutcomeOK {
		r.history.Observe(names(cs.recent), ev.Tool, ev.At)
	}
	cs.recent = appendBounded(cs.recent, ev, maxRecent)
	cs.recentKeys = appendBounded(cs.recentKeys, callKey(ev.Tool, ev.Params), maxRecent)
	// A call of a recommended tool with the same arguments is that
	// recommendation taken: it is no longer a suggestion.
	k := cs.recentKeys[len(cs.recentKeys)-1]
	cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool { return rec.key == k })
	r.update(ev.Caller, cs)
}

// ObserveFile takes a file event for every known caller (the catalog
// decides who may see the space).
func (r *Recommender) ObserveFile(ev FileEvent) {
	if ev.At.IsZero() {
		ev.At = r.cfg.Now()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, cs := range r.callers {
		cs.files = slices.DeleteFunc(cs.files, func(f FileEvent) bool { return f.Space == ev.Space && f.Rel == ev.Rel })
		cs.files = appendBounded(cs.files, ev, maxFiles)
		r.update(name, cs)
	}
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

// Accept takes the caller's answer "yes" to id and returns the
// recommendation, for the channel to run through the pipeline.
func (r *Recommender) Accept(caller, id string) (*Recommendation, error) {
	return r.answer(caller, id, Accepted)
}

// Dismiss takes the caller's answer "no" to id.
func (r *Recommender) Dismiss(caller, id string) error {
	_, err := r.answer(caller, id, Dismissed)
	return err
}

func (r *Recommender) answer(caller, id string, o Outcome) (*Recommendation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.callers[caller]
	if cs == nil {
		return nil, ErrNotFound
	}
	i := slices.IndexFunc(cs.active, func(rec *Recommendation) bool { return rec.ID == id })
	if i < 0 {
		return nil, ErrNotFound
	}
	rec := cs.active[i]
	cs.active = slices.Delete(cs.active, i, i+1)
	r.feedback(rec, o)
	typ := "accepted"
	if o == Dismissed {
		typ = "dismissed"
	}
	r.publish(caller, Update{Type: typ, Recommendation: rec})
	cp := *rec
	return &cp, nil
}

// feedback teaches the models one answer and keeps it (r.mu held).
func (r *Recommender) feedback(rec *Recommendation, o Outcome) {
	r.fusion.Update(rec.Tool, rec.features, o)
	now := r.cfg.Now()
	switch o {
	case Accepted:
		r.stats.Accepted++
		if rec.text != "" {
			r.observeText(rec.text, rec.Tool)
		}
	case Dismissed:
		r.stats.Dismissed++
		r.dismissed(rec.Caller, rec.Context, rec.Tool, now)
	case Ignored:
		r.stats.Ignored++
	}
	if r.store != nil {
		fb := feedbackLine{At: now, Caller: rec.Caller, Tool: rec.Tool, Context: rec.Context, Outcome: outcomeName(o),
			Features: rec.features, Text: rec.text}
		if err := r.store.append(fb); err != nil {
			r.cfg.Logger.Error("recommender: feedback not kept", "err", err)
		}
	}
}

func (r *Recommender) dismissed(caller, context, tool string, now time.Time) {
	k := caller + "\x00" + context + "\x00" + tool
	s := r.suppress[k]
	if s == nil {
		if len(r.suppress) >= maxSuppression {
			r.evictSuppression(now)
		}
		s = &suppression{}
		r.suppress[k] = s
	}
	s.Dismissals++
	if s.Dismissals >= r.cfg.SuppressAt {
		s.Until = now.Add(r.cfg.SuppressFor)
	} else {
		s.Until = now.Add(r.cfg.Cooldown)
	}
}

func (r *Recommender) evictSuppression(now time.Time) {
	var oldest string
	var t time.Time
	for k, s := range r.suppress {
		if !now.Before(s.Until) {
			delete(r.suppress, k)
			continue
		}
		if oldest == "" || s.Until.Before(t) {
			oldest, t = k, s.Until
		}
	}
	if len(r.suppress) >= maxSuppression {
		delete(r.suppress, oldest)
	}
}

func (r *Recommender) suppressed(caller, context, tool string, now time.Time) bool {
	s := r.suppress[caller+"\x00"+context+"\x00"+tool]
	return s != nil && now.Before(s.Until)
}

func (r *Recommender) observeText(text, tool string) {
	r.textObs = appendBounded(r.textObs, textObs{Text: text, Tool: tool}, maxTextObs)
	if r.text != nil {
		r.text.Observe(text, tool)
	}
}

// Subscribe streams the caller's updates until cancel is called. A
// subscriber that falls subBuffer updates behind is cut off: its channel
// closes (counted in SubscriberDrops), and it resubscribes to resync.
func (r *Recommender) Subscribe(caller string) (<-chan Update, func()) {
	s := &subscriber{caller: caller, ch: make(chan Update, subBuffer)}
	r.mu.Lock()
	r.caller(caller)
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			delete(r.subs, s)
			if !s.closed {
				close(s.ch)
				s.closed = true
			}
		})
	}
}

func (r *Recommender) publish(caller string, u Update) {
	if u.Recommendation != nil { // a copy: the live one keeps changing (Seen)
		cp := *u.Recommendation
		u.Recommendation = &cp
	}
	for s := range r.subs {
		if s.caller != caller {
			continue
		}
		select {
		case s.ch <- u:
		default:
			// A subscriber this far behind is cut off rather than fed a
			// stream with holes: its channel closes, and a client that
			// reconnects starts again from the live list.
			r.stats.SubscriberDrops++
			delete(r.subs, s)
			close(s.ch)
			s.closed = true
		}
	}
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

// candidate is one tool scored for one caller's context.
type candidate struct {
	entry *selector.Entry
	info  *toolInfo
	x     Features
	p     float64
}

// update recomputes the caller's recommendations (r.mu held).
func (r *Recommender) update(caller string, cs *callerState) {
	r.stats.Updates++
	now := r.cfg.Now()
	entries := r.callable(caller, cs, now)
	if len(entries) == 0 {
		return
	}
	r.ensureText(entries, cs.catalog.key)
	cs.files = slices.DeleteFunc(cs.files, func(f FileEvent) bool { return now.Sub(f.At) > r.cfg.FileWindow })

	taskScores, convScores, histScores := r.scratch[0], r.scratch[1], r.scratch[2]
	clear(taskScores)
	clear(convScores)
	clear(histScores)
	if cs.task != "" {
		r.text.AddScores(cs.task, 1, taskScores)
	}
	if conv := conversationText(cs.turns); conv != "" {
		r.text.AddScores(conv, 1, convScores)
	}
	prev := names(cs.recent)
	recentScores := RecentScores(prev)
	if len(prev) > 0 {
		r.history.AddScores(prev, now, histScores)
	}

	cands := r.cands[:0]
	for i := range entries {
		e := &entries[i]
		n := e.Tool.Name
		var x Features
		x[SignalTask] = taskScores[n]
		x[SignalConversation] = convScores[n]
		x[SignalRecent] = recentScores[n]
		x[SignalHistory] = histScores[n]
		x[SignalSpace], _ = fileScore(e.Tool, cs.catalog.infos[i], cs.files)
		if x == (Features{}) {
			continue
		}
		cands = append(cands, candidate{entry: &entries[i], info: cs.catalog.infos[i], x: x, p: r.fusion.Score(n, x)})
	}
	r.cands = cands[:0]
	sort.Slice(cands, func(i, j int) bool { return cands[i].p > cands[j].p })

	cs.issued = slices.DeleteFunc(cs.issued, func(t time.Time) bool { return now.Sub(t) >= time.Minute })
	// Building is the costly part (argument extraction, the schema stage):
	// an update tries at most maxBuilds candidates, best first.
	builds := 0
	for _, c := range cands {
		if c.p < r.cfg.Threshold || len(cs.active) >= r.cfg.MaxActive || builds >= maxBuilds {
			break
		}
		builds++
		rec := r.build(caller, cs, c, now)
		if rec == nil {
			continue
		}
		if slices.ContainsFunc(cs.active, func(a *Recommendation) bool { return a.key == rec.key }) {
			continue
		}
		// The same call just made is no suggestion.
		if slices.Contains(cs.recentKeys, rec.key) {
			continue
		}
		if r.suppressed(caller, rec.Context, rec.Tool, now) {
			r.stats.Suppressed++
			continue
		}
		if len(cs.issued) >= r.cfg.PerMinute {
			r.stats.RateLimited++
			break
		}
		cs.issued = append(cs.issued, now)
		cs.active = append(cs.active, rec)
		r.stats.Issued++
		r.publish(caller, Update{Type: "new", Recommendation: rec})
	}
}

// build fills the candidate's arguments from the signal that drives it and
// checks them against the tool's schema; nil when they cannot be filled
// honestly (a required value the context does not give) or fail.
func (r *Recommender) build(caller string, cs *callerState, c candidate, now time.Time) *Recommendation {
	t := c.entry.Tool
	ti := c.info
	driver := strongest(c.x)
	var args map[string]any
	var ctxKey, text string
	var reasons []SignalReason
	switch driver {
	case SignalSpace:
		_, f := fileScore(t, ti, cs.files)
		args = fileArgs(ti, f)
		ctxKey = "space:" + f.Space + ":" + fileKind(f.Rel)
	case SignalTask:
		text = cs.task
		ctxKey = "task:" + shortHash(cs.task)
	case SignalConversation:
		text = conversationText(cs.turns)
		ctxKey = "conversation"
	default:
		ctxKey = driver.String() + ":" + lastName(cs.recent)
	}
	if args == nil {
		hintText := text
		if hintText == "" {
			hintText = cs.task
		}
		var missing []string
		var err error
		args, missing, err = selector.ExtractArgumentsReport(t.Parameters, hintText, selector.Hints{Spaces: r.cfg.Spaces})
		if err != nil {
			return nil
		}
		carryArgs(args, t, cs.recent, &missing)
		if len(missing) > 0 {
			return nil
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	if err := r.cfg.Validate(t, raw); err != nil || !allowedByView(ti, args) {
		r.stats.Invalid++
		return nil
	}
	for s := Signal(0); s < NumSignals; s++ {
		if c.x[s] > 0 {
			reasons = append(reasons, SignalReason{Signal: s.String(), Score: round3(c.x[s]), Why: r.why(s, t, cs)})
		}
	}
	sort.SliceStable(reasons, func(i, j int) bool { return reasons[i].Score > reasons[j].Score })
	id := "rec-" + strconv.FormatInt(now.UnixNano(), 36) + "-" + strconv.FormatUint(r.ids.Add(1), 36)
	return &Recommendation{ID: id, Caller: caller, Tool: t.Name, Provider: c.entry.Provider, Arguments: raw,
		Score: round3(c.p), Signals: reasons, Reason: reasons[0].Why, Urgency: UrgencyLow, Context: ctxKey,
		Idempotent: t.Idempotent, Created: now, Expires: now.Add(r.cfg.TTL), features: c.x, text: text, key: callKey(t.Name, raw)}
}

// why is a one-line reason for signal s behind tool t.
func (r *Recommender) why(s Signal, t pipeline.Tool, cs *callerState) string {
	switch s {
	case SignalSpace:
		if _, f := fileScore(t, r.info(t), cs.files); f.Rel != "" {
			return fmt.Sprintf("%s %s in %s", f.Rel, pastTense(f.Op), f.Space)
		}
	case SignalTask:
		return fmt.Sprintf("your task: %q", clip(cs.task, 60))
	case SignalConversation:
		if len(cs.turns) > 0 {
			return fmt.Sprintf("you asked: %q", clip(cs.turns[len(cs.turns)-1], 60))
		}
	case SignalRecent:
		return fmt.Sprintf("you just called %s", lastName(cs.recent))
	case SignalHistory:
		return fmt.Sprintf("%s usually follows %s", t.Name, lastName(cs.recent))
	}
	return s.String()
}

// ensureText builds the text model over the callable tools when the tool
// set (key) changed, replaying what was learned.
func (r *Recommender) ensureText(entries []selector.Entry, key string) {
	if r.text != nil && key == r.textKey {
		return
	}
	docs := make([]ToolDoc, 0, len(entries))
	for _, e := range entries {
		docs = append(docs, ToolDoc{Name: e.Tool.Name, Description: e.Tool.Description, Params: r.info(e.Tool).docs})
	}
	r.text, r.textKey = NewTextModel(docs), key
	for _, o := range r.textObs {
		r.text.Observe(o.Text, o.Tool)
	}
}

// TrainHistory feeds the history model one caller's past calls in order
// (from the audit log at start).
func (r *Recommender) TrainHistory(calls []string, at []time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range calls {
		lo := max(0, i-maxRecent)
		r.history.Observe(calls[lo:i], calls[i], at[i])
	}
}

// TrainText teaches the text model that text was served by tool (from the
// session log at start).
func (r *Recommender) TrainText(text, tool string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.observeText(text, tool)
}

func strongest(x Features) Signal {
	best := Signal(0)
	for s := Signal(1); s < NumSignals; s++ {
		if x[s] > x[best] {
			best = s
		}
	}
	return best
}

func conversationText(turns []string) string {
	if len(turns) == 0 {
		return ""
	}
	// The latest turn counts most: it is the one given twice.
	return strings.Join(turns, " ") + " " + turns[len(turns)-1]
}

func names(evs []pipeline.CallEvent) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.Tool)
	}
	return out
}

func lastName(evs []pipeline.CallEvent) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].Tool
}

// carryArgs fills required parameters the text did not give from the
// caller's latest call with a parameter of the same name (pdf-extract's
// space and path carry over to the next step on that file).
func carryArgs(args map[string]any, t pipeline.Tool, recent []pipeline.CallEvent, missing *[]string) {
	if len(*missing) == 0 || len(recent) == 0 {
		return
	}
	var last map[string]any
	if json.Unmarshal(recent[len(recent)-1].Params, &last) != nil {
		return
	}
	*missing = slices.DeleteFunc(*missing, func(p string) bool {
		v, ok := last[p]
		if ok {
			args[p] = v
		}
		return ok
	})
}

func appendBounded[T any](s []T, v T, n int) []T {
	s = append(s, v)
	if len(s) > n {
		s = slices.Delete(s, 0, len(s)-n)
	}
	return s
}

// callKey is a call's identity: the tool and its arguments in canonical
// JSON (keys sorted), so that key order and spacing do not tell two equal
// calls apart.
func callKey(tool string, args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return tool + "\x00" + string(args)
	}
	b, _ := json.Marshal(v)
	return tool + "\x00" + string(b)
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(s))))
	return hex.EncodeToString(h[:6])
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func pastTense(op string) string {
	switch op {
	case "create":
		return "appeared"
	case "write":
		return "changed"
	case "open":
		return "opened"
	case "rename":
		return "was renamed"
	}
	return op
}

func fileKind(rel string) string {
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(rel)), ".")
	if ext == "" {
		return "file"
	}
	return ext
}

// Prime sets a caller's context at once from what a one-shot command can
// read back (the audit log's latest calls, recently changed files, the
// chat history) and recomputes once. The calls are not taught to the
// history model again: it learned them from the audit log.
func (r *Recommender) Prime(caller string, recent []pipeline.CallEvent, files []FileEvent, turns []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.caller(caller)
	for _, ev := range recent {
		cs.recent = appendBounded(cs.recent, ev, maxRecent)
		cs.recentKeys = appendBounded(cs.recentKeys, callKey(ev.Tool, ev.Params), maxRecent)
	}
	for _, f := range files {
		cs.files = appendBounded(cs.files, f, maxFiles)
	}
	for _, t := range turns {
		if t = strings.TrimSpace(t); t != "" && !strings.HasPrefix(t, "/") {
			cs.turns = appendBounded(cs.turns, t, maxTurns)
		}
	}
	r.update(caller, cs)
}
