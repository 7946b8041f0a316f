package pipeline

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/airs-dev/airs/provenance"
)

// Verifier is the Intent Verifier: does this call fit what the caller is
// for (its purpose and task) and what the user asked? A model-backed one
// answers VerdictSchema through AIRS's grammar; the default needs no
// model (newVerifier). An error means the verifier was unavailable: the
// call is judged by the verifier without a model instead, and the reason
// is logged.
type Verifier interface {
	Verify(ctx context.Context, in VerifyInput) (Verdict, error)
}

// VerifyInput is what the verifier judges.
type VerifyInput struct {
	Caller  string
	Purpose string // agents.NAME.purpose
	Task    string // the caller's current task
	Request string // the user's words
	Tool    *Tool
	Class   ToolClass
	Params  any // decoded
	Labels  provenance.Args
	// Novel: this agent has not called this tool before (in this process),
	// or the anomaly model scored the call at its review level or above.
	Novel bool
}

// Verdict is the verifier's answer, as a model writes it under
// VerdictSchema.
type Verdict struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// Verdicts.
const (
	VerdictAligned    = "aligned"
	VerdictMisaligned = "misaligned"
	VerdictUnsure     = "unsure"
	// VerdictSkipped: the verifier did not judge the call (the reason
	// says why).
	VerdictSkipped = "skipped"
)

// VerdictSchema is the JSON Schema a model verifier's answer is
// constrained to (grammar-constrained decoding).
const VerdictSchema = `{"type":"object","properties":{"verdict":{"enum":["aligned","misaligned","unsure"]},` +
	`"reason":{"type":"string","minLength":1,"maxLength":300}},"required":["verdict","reason"],"additionalProperties":false}`

// DefaultPurposeThreshold is the similarity under which a purpose does not
// cover a tool. It is calibrated on the retrieval model between the
// purposes of the injection eval's agents and the built-in tools (see
// docs/level2.md for the figures and the command).
const DefaultPurposeThreshold = 0.20

// verifier is the Intent Verifier without a model: the request's own
// words (does it ask for this action, on this object?), the retrieval
// model's match between purpose and task and the tool, and novelty.
type verifier struct {
	asks      func(string) Asked
	sim       func(a, b string) float64
	threshold float64

	mu    sync.Mutex
	sims  map[[2]string]float64 // (purpose+task, tool) → similarity
	acts  map[string][]string   // tool → its actions
	seen  map[[2]string]bool    // (caller, tool) delivered before
	asked map[string]Asked      // request → what it asks, the last ones
	limit int
}

func newVerifier(o Level2Options) *verifier {
	t := o.PurposeThreshold
	if t <= 0 {
		t = DefaultPurposeThreshold
	}
	return &verifier{asks: o.Asks, sim: o.Similarity, threshold: t,
		sims: map[[2]string]float64{}, acts: map[string][]string{}, seen: map[[2]string]bool{}, asked: map[string]Asked{}, limit: 1 << 16}
}

// reSend are the words of a request that asks to send something out or
// fetch it from the network; understand's actions are about files.
var reSend = regexp.MustCompile(`(?i)\b(?:send|sending|post|posting|upload|uploading|fetch|fetching|download|downloading|e-?mail|mail|submit|share|publish|forward|webhook|https?://\S+)\b`)

// reClause splits a purpose into the clauses it lists.
var reClause = regexp.MustCompile(`\s*(?:[,;.]|\band\b|\bor\b)\s*`)

// verify runs the configured verifier, or the one without a model.
func (l *Level2) verify(ctx context.Context, in level2Input, r Level2Result, later **VerifyInput) Verdict {
	v := VerifyInput{Caller: in.caller, Purpose: l.opts.Purposes[in.caller], Request: in.intent, Tool: in.tool,
		Class: r.Class, Params: in.params, Labels: r.Labels}
	v.Task = l.taskOf(in.caller)
	v.Novel = in.anomaly >= AnomalyReview || !l.verifier.seenBefore(in.caller, in.tool.Name)
	if mv := l.modelVerifier(); mv != nil && r.Class == ClassRead {
		*later = &v // a read goes ahead: the model judges it in the background
	} else if mv != nil {
		verdict, err := mv.Verify(ctx, v)
		if err == nil && validVerdict(verdict.Verdict) {
			return verdict
		}
		if err == nil {
			err = fmt.Errorf("answered verdict %q", verdict.Verdict)
		}
		l.log.Warn("level 2: the model verifier is unavailable; judged without a model", "tool", in.tool.Name, "err", err)
	}
	if l.opts.Asks == nil && l.opts.Similarity == nil {
		l.logSkip("no request reader and no retrieval model configured (Level2Options.Asks, Similarity)")
		return Verdict{Verdict: VerdictSkipped, Reason: "no request reader and no retrieval model"}
	}
	return l.verifier.judge(v, l)
}

func validVerdict(s string) bool {
	return s == VerdictAligned || s == VerdictMisaligned || s == VerdictUnsure
}

// ask reads a request's words, cached: the calls of one turn share them.
func (v *verifier) ask(text string) Asked {
	v.mu.Lock()
	a, ok := v.asked[text]
	v.mu.Unlock()
	if ok {
		return a
	}
	a = v.asks(text)
	v.mu.Lock()
	if len(v.asked) >= 1024 {
		clear(v.asked)
	}
	v.asked[text] = a
	v.mu.Unlock()
	return a
}

func (v *verifier) seenBefore(caller, tool string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen[[2]string{caller, tool}]
}

// delivered marks (caller, tool) as seen once a call of it ran.
func (v *verifier) delivered(caller, tool string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.seen) >= v.limit {
		clear(v.seen) // a bound, not a history: the anomaly model keeps that
	}
	v.seen[[2]string{caller, tool}] = true
}

// toolText is what the retrieval model compares a purpose with.
func toolText(t *Tool) string {
	d := t.Description
	if i := strings.Index(d, ". "); i > 0 {
		d = d[:i+1]
	}
	return strings.NewReplacer("-", " ", "_", " ", ".", " ").Replace(t.Name) + ". " + d
}

func (v *verifier) similarity(purpose string, t *Tool) float64 {
	key := [2]string{purpose, t.Name + "@" + t.Version}
	v.mu.Lock()
	s, ok := v.sims[key]
	v.mu.Unlock()
	if ok {
		return s
	}
	// A purpose lists what the agent does ("reads, summarizes and
	// deletes …"): each clause is matched on its own, as a retrieval query
	// is, and the best match counts; the whole sentence dilutes them.
	tt := toolText(t)
	s = v.sim(purpose, tt)
	for _, c := range reClause.Split(purpose, -1) {
		if c = strings.TrimSpace(c); c != "" {
			s = max(s, v.sim(c, tt))
		}
	}
	v.mu.Lock()
	if len(v.sims) < v.limit {
		v.sims[key] = s
	}
	v.mu.Unlock()
	return s
}

// actions are what a tool does, in the words a request would use.
func (v *verifier) actions(t *Tool, class ToolClass) []string {
	v.mu.Lock()
	a, ok := v.acts[t.Name]
	v.mu.Unlock()
	if ok {
		return a
	}
	if v.asks != nil {
		a = append(a, v.asks(toolText(t)).Actions...)
	}
	if class == ClassSend || reSend.MatchString(toolText(t)) {
		a = append(a, "send")
	}
	v.mu.Lock()
	if len(v.acts) < v.limit {
		v.acts[t.Name] = a
	}
	v.mu.Unlock()
	return a
}

// judge is the verifier without a model. It says misaligned when the
// request's words do not ask for the tool's action and either the
// purpose does not cover the tool or the call is novel for the agent;
// and, with no request words, when the purpose does not cover the tool
// and the call is novel (a research agent's first delete-file).
func (v *verifier) judge(in VerifyInput, l *Level2) Verdict {
	var why []string
	asked, named, known := true, true, true
	mismatch := false
	if purpose := strings.TrimSpace(in.Purpose + " " + in.Task); purpose != "" && v.sim != nil {
		s := v.similarity(purpose, in.Tool)
		if mismatch = s < v.threshold; mismatch {
			why = append(why, fmt.Sprintf("%s's purpose matches %s at %.2f, under %.2f", in.Caller, in.Tool.Name, round2(s), v.threshold))
		}
	}
	words := in.Request != "" && v.asks != nil
	if in.Class == ClassRead && !(mismatch && in.Novel) {
		// A read is flagged only when neither purpose nor habit vouches
		// for it: the request need not be read (the costly part).
		words = false
	}
	if words {
		acts := v.actions(in.Tool, in.Class)
		var req Asked
		if in.Class == ClassDestructive || slices.ContainsFunc(acts, func(a string) bool { return a != "send" }) {
			req = v.ask(in.Request) // a send tool's action is read from the send words alone
		}
		want := req.Actions
		if reSend.MatchString(in.Request) {
			want = append(want, "send")
		}
		known = len(acts) > 0
		if known {
			asked = overlap(want, acts)
		} else {
			// No action word fits the tool: its own name's words stand in.
			asked = namesTool(in.Request, in.Tool.Name)
		}
		if in.Class == ClassDestructive && !req.Destructive {
			asked = false
		}
		if !asked {
			why = append(why, fmt.Sprintf("the request does not ask to %s", orWords(acts, in.Tool.Name)))
		}
		named = l.targetsNamed(in)
		if asked && !named {
			why = append(why, "the request does not name what it acts on")
		}
	}
	if in.Novel {
		why = append(why, fmt.Sprintf("%s has not called %s before", in.Caller, in.Tool.Name))
	}
	reason := strings.Join(why, "; ")
	switch {
	case in.Class == ClassRead:
		// A read changes nothing: flagged only when nothing vouches for it.
		if !asked && mismatch && in.Novel && !named {
			return Verdict{VerdictMisaligned, reason}
		}
		if reason != "" {
			return Verdict{VerdictUnsure, reason}
		}
	case words && asked && named:
		// The user asked for this action on this object: whatever the
		// purpose, it is theirs to ask (a destructive call still meets
		// the person's gate as it always does).
		if reason == "" {
			return Verdict{VerdictAligned, "the request asks for it on what it names"}
		}
		return Verdict{VerdictAligned, "the request asks for it on what it names (" + reason + ")"}
	case !asked && (mismatch || (in.Novel && known)):
		return Verdict{VerdictMisaligned, reason}
	case mismatch && in.Novel:
		return Verdict{VerdictMisaligned, reason}
	case !asked || !named || mismatch:
		return Verdict{VerdictUnsure, reason}
	}
	if reason == "" {
		reason = "the request asks for it and the purpose covers it"
	}
	return Verdict{VerdictAligned, reason}
}

// targetsNamed reports whether every target argument but the space is in
// the request's words.
func (l *Level2) targetsNamed(in VerifyInput) bool {
	m, _ := in.Params.(map[string]any)
	for k, val := range m {
		if k == "space" || !l.targets[strings.ToLower(k)] {
			continue
		}
		for _, s := range stringsOf(val, nil) {
			if !provenance.InWords(s, in.Request) {
				return false
			}
		}
	}
	return true
}

// namesTool reports whether a word of the tool's name (notes.create:
// "notes", "create") of four letters or more is in the request.
func namesTool(request, tool string) bool {
	low := strings.ToLower(request)
	for _, w := range strings.FieldsFunc(strings.ToLower(tool), func(r rune) bool { return r == '.' || r == '-' || r == '_' || r == '/' }) {
		if len(w) >= 4 && strings.Contains(low, w) {
			return true
		}
	}
	return false
}

func overlap(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func orWords(acts []string, tool string) string {
	if len(acts) == 0 {
		return "call " + tool
	}
	return strings.Join(acts, " or ") + " (" + tool + ")"
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
