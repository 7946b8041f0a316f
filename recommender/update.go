package recommender

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

func lastTurn(turns []string) string {
	if len(turns) == 0 {
		return ""
	}
	return turns[len(turns)-1]
}

// One update: every signal scored for the caller's tools, fused, the best
// built into suggestions.

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
	// One reading of each text per update, however many candidates ask.
	if r.parsed == nil {
		r.parsed = map[string]*understand.Interpretation{}
	}
	clear(r.parsed)
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

	// A destructive suggestion lives only as long as the ask behind it: a
	// new task or a new turn retires it.
	cs.active = slices.DeleteFunc(cs.active, func(rec *Recommendation) bool {
		if !rec.Destructive || rec.text == cs.task && cs.task != "" || rec.text == lastTurn(cs.turns) && rec.text != "" {
			return false
		}
		r.publish(rec.Caller, Update{Type: "expired", Recommendation: rec})
		return true
	})
	cs.issued = slices.DeleteFunc(cs.issued, func(t time.Time) bool { return now.Sub(t) >= time.Minute })
	// Building is the costly part (argument extraction, the schema stage):
	// an update tries at most maxBuilds candidates, best first.
	builds := 0
	for _, c := range cands {
		if c.p < r.cfg.Threshold || len(cs.active) >= r.cfg.MaxActive || builds >= maxBuilds {
			break
		}
		builds++
		rec := r.build(caller, cs, c, entries, now)
		if rec == nil {
			continue
		}
		if slices.ContainsFunc(cs.active, func(a *Recommendation) bool { return a.key == rec.key }) {
			continue
		}
		// The same call just made is no suggestion; nor is one denied.
		if slices.Contains(cs.recentKeys, rec.key) || slices.Contains(cs.denied, rec.key) {
			continue
		}
		// Nor is a step the person just saw, in other words: the same tool
		// on the same values (a plan's list-files with a pattern, then a
		// suggestion to list the same space), while no file changed since.
		if sameAsMade(cs, rec.Tool, rec.Arguments) {
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

// build fills the candidate's arguments from the signals behind it, the
// strongest that gives a whole call first, and checks them dry (the
// tool's schema, and each a value of its parameter's type: a file that
// is there, for the reader of its type; an expression that parses; a text
// the person gave); nil when no signal gives one honestly.
func (r *Recommender) build(caller string, cs *callerState, c candidate, callable []selector.Entry, now time.Time) *Recommendation {
	t := c.entry.Tool
	var order []Signal
	for s := Signal(0); s < NumSignals; s++ {
		if c.x[s] > 0 {
			order = append(order, s)
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return c.x[order[i]] > c.x[order[j]] })
	for _, driver := range order {
		args, ctxKey, text, ok := r.argsFrom(driver, caller, cs, c, callable)
		if !ok {
			continue
		}
		raw, err := json.Marshal(args)
		if err != nil {
			continue
		}
		if err := r.cfg.Validate(t, raw); err != nil || !allowedByView(c.info, args) || selector.SuggestionFits(t, args, callable, r.cfg.Spaces, r.cfg.FileExists) != nil {
			r.stats.Invalid++
			continue
		}
		var reasons []SignalReason
		for _, s := range order {
			reasons = append(reasons, SignalReason{Signal: s.String(), Score: round3(c.x[s]), Why: r.why(s, t, cs)})
		}
		id := "rec-" + strconv.FormatInt(now.UnixNano(), 36) + "-" + strconv.FormatUint(r.ids.Add(1), 36)
		return &Recommendation{ID: id, Caller: caller, Tool: t.Name, Provider: c.entry.Provider, Arguments: raw,
			Score: round3(c.p), Signals: reasons, Reason: r.why(driver, t, cs), Urgency: UrgencyLow, Context: ctxKey,
			Idempotent: t.Idempotent, Destructive: t.Destructive, Created: now, Expires: now.Add(r.cfg.TTL), features: c.x, text: text, key: callKey(t.Name, raw)}
	}
	return nil
}

// argsFrom fills the candidate's arguments from one signal: a file event's
// file; a task's or the latest turn's values, read by type against the
// caller's files as a plan's step is filled; for a call that usually
// follows the last one, the task's values and the rest carried from that
// call. It also says the context a dismissal is kept under and the text
// behind the suggestion (for learning). A destructive tool only on an
// explicit ask, in the task or the latest turn, as long as it stands.
func (r *Recommender) argsFrom(driver Signal, caller string, cs *callerState, c candidate, callable []selector.Entry) (args map[string]any, ctxKey, text string, ok bool) {
	t := c.entry.Tool
	argText := ""
	switch driver {
	case SignalSpace:
		_, f := fileScore(t, c.info, cs.files)
		args = fileArgs(c.info, f)
		ctxKey = "space:" + f.Space + ":" + fileKind(f.Rel)
	case SignalTask:
		text, argText = cs.task, cs.task
		ctxKey = "task:" + shortHash(cs.task)
	case SignalConversation:
		// The turns together say which tool; the arguments come from the
		// latest turn alone (the reason shown quotes it), never a word of
		// an older turn ("Paris" from a question about France).
		text, argText = conversationText(cs.turns), lastTurn(cs.turns)
		ctxKey = "conversation"
	default:
		ctxKey = driver.String() + ":" + lastName(cs.recent)
	}
	if t.Destructive {
		switch {
		case driver == SignalTask && understand.ParsePlain(cs.task).ExplicitDestructive:
			text = cs.task
		case driver == SignalConversation && understand.ParsePlain(lastTurn(cs.turns)).ExplicitDestructive:
			text = lastTurn(cs.turns)
			ctxKey = "conversation:" + shortHash(text)
		default:
			return nil, "", "", false
		}
	}
	hints := selector.Hints{Spaces: r.cfg.Spaces}
	switch {
	case driver == SignalSpace:
		if args == nil {
			return nil, "", "", false
		}
	case argText != "":
		env := r.env(caller)
		in, ok := r.parsed[argText]
		if !ok {
			in = understand.Parse(argText, env)
			r.parsed[argText] = in
		}
		var err error
		if args, err = selector.CallUnderstood(*c.entry, in, env, callable, hints); err != nil {
			return nil, "", "", false
		}
	default:
		var missing []string
		var err error
		args, missing, err = selector.ArgumentsUnderstood(t, understand.ParsePlain(cs.task), hints)
		if err != nil {
			return nil, "", "", false
		}
		carryArgs(args, t, cs.recent, &missing)
		if len(missing) > 0 {
			return nil, "", "", false
		}
	}
	return args, ctxKey, text, true
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
	if len(args) > maxObservedParams {
		// Not worth decoding: such a call is never suggested, so its key
		// need only tell it apart.
		h := sha256.Sum256(args)
		return tool + "\x00sha256:" + hex.EncodeToString(h[:])
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return tool + "\x00" + string(args)
	}
	b, _ := json.Marshal(v)
	return tool + "\x00" + string(b)
}

// maxObservedParams is the size of arguments past which the recommender
// keeps a call's key and no arguments: a suggestion never carries a long
// text on, and decoding one would hold up every caller's calls.
const maxObservedParams = 16 << 10

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

// env is what caller's texts are read against.
func (r *Recommender) env(caller string) understand.Env {
	if r.cfg.Env != nil {
		return r.cfg.Env(caller)
	}
	return understand.Env{Spaces: r.cfg.Spaces}
}
