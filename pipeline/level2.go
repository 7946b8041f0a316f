package pipeline

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airs-dev/airs/provenance"
)

// Level2 is capability level 2 as a data-flow check: where every argument
// of a call came from (provenance), whether that flow is allowed (flow
// policies), and whether the call fits what the caller is for and what
// the user asked (the intent verifier). It runs in the intent stage of
// every call, whichever channel sent it, just before the intent gate
// (Config.Gate), and hands the gate what a person must see: a call it
// holds waits for a person as a destructive one does, with the flow or
// the verifier's reason as the question ("delete-file path came from the
// text of documents/invoice.pdf"); an "always" grant does not answer it.
//
// Provenance is found, not trusted from the request: the Manager
// remembers the string values of the outputs each caller was shown
// (within a byte budget per caller, for the callers seen last), and an
// argument that occurs in one of them carries its labels, unless the
// value is in the user's own words (Request.Intent). Calls of one model
// turn share Request.Turn: an argument the model wrote after seeing
// output carries that output's labels unless the user's words hold it,
// whether or not it was copied verbatim. A tool's output carries its
// source (a space's file, an MCP server, a network host) and the
// untrusted labels of its inputs, so labels follow values through chain
// templates, foreach, plans and summaries.
type Level2 struct {
	opts    Level2Options
	flows   []FlowRule
	targets map[string]bool
	bodies  map[string]bool
	send    map[string]bool
	trusted map[string]bool // "space:NAME" and "mcp:NAME" the configuration trusts

	callers *originsLRU
	turns   *originsLRU

	verifier *verifier
	log      *slog.Logger
	skipOnce sync.Once

	task  atomic.Pointer[func(string) string] // SetTask; else opts.Task
	model atomic.Pointer[Verifier]            // SetVerifier; else opts.Verifier
	descs atomic.Pointer[descOrigins]         // MCP tools' descriptions, per registry generation
	bg    chan struct{}                       // the model's background judgements of reads in flight
	enums sync.Map                            // tool@version → map[string]bool: enum parameters
}

// descOrigins are the descriptions of the outside (MCP) tools of one
// registry generation: a model reads them before any call, so a value it
// copies from one carries that server's label.
type descOrigins struct {
	gen uint64
	o   *provenance.Origins
}

// descriptions returns the Origins of reg's MCP tool descriptions, nil
// when there are none.
func (l *Level2) descriptions(reg *Registry) *provenance.Origins {
	gen := reg.Generation()
	if d := l.descs.Load(); d != nil && d.gen == gen {
		return d.o
	}
	var o *provenance.Origins
	for _, r := range reg.List() {
		name, ok := strings.CutPrefix(r.Provider, "mcp:")
		if !ok {
			continue
		}
		if o == nil {
			o = provenance.NewOrigins(4 << 20)
		}
		o.Observe([]string{r.Tool.Description, string(r.Tool.Parameters)},
			provenance.Of(provenance.Label{Kind: provenance.MCP, Source: name + provenance.DescriptionsSuffix, Trusted: l.trusted["mcp:"+name]}))
	}
	l.descs.Store(&descOrigins{gen: gen, o: o})
	return o
}

// Level2Options configure Level2. The zero value is the safe default.
type Level2Options struct {
	// Flows are the flow policies, checked in order (the first rule that
	// matches an argument decides); nil is DefaultFlows.
	Flows []FlowRule
	// TargetArgs name the arguments that pick what a call acts on (a
	// file, a URL, a recipient); BodyArgs those that carry data (a
	// body, a message). nil: DefaultTargetArgs, DefaultBodyArgs.
	TargetArgs, BodyArgs []string
	// SendTools are tools that send data out of the machine beyond those
	// that require a Network capability; nil: DefaultSendTools.
	SendTools []string
	// TrustedSpaces and TrustedMCP are spaces and MCP servers whose
	// content is trusted (written by the user): their labels are kept,
	// but rules about untrusted values do not fire on them.
	TrustedSpaces, TrustedMCP []string
	// OriginBytes is the text kept per caller and per turn to find where
	// a value came from (default 512 KiB); MaxCallers and MaxTurns bound
	// how many are kept (default 256 and 1024; the least recent go).
	OriginBytes          int
	MaxCallers, MaxTurns int

	// Purposes are what each agent is for (agents.NAME.purpose).
	Purposes map[string]string
	// Task returns the caller's current task (`airs task`, PUT
	// /v1/context), "" none; nil: no task.
	Task func(caller string) string
	// Verifier judges a call against purpose, task and request; nil is
	// the verifier without a model (verifier.go) built from Asks and
	// Similarity. Unsure is what an "unsure" verdict does: "allow"
	// (default: logged) or "hold".
	Verifier Verifier
	Unsure   string
	// Asks reads the actions a request asks for ("delete", "read" …) and
	// whether it explicitly asks for a destructive one (package understand
	// in the engine); Similarity is the retrieval model's match of two
	// texts in [0, 1]. Either nil: that signal is left out (logged once).
	Asks       func(text string) Asked
	Similarity func(a, b string) float64
	// PurposeThreshold: a purpose (and task) matching a tool below it is
	// a mismatch (default DefaultPurposeThreshold).
	PurposeThreshold float64
}

// Asked is what a request's own words ask for.
type Asked struct {
	Actions     []string
	Destructive bool
}

// Defaults of Level2Options.
var (
	DefaultTargetArgs = []string{"path", "paths", "file", "files", "filename", "space", "folder", "dir", "directory",
		"url", "uri", "href", "host", "to", "cc", "bcc", "recipient", "recipients", "dest", "destination", "target",
		"from", "source", "id", "name", "email", "address", "channel", "repo"}
	DefaultBodyArgs  = []string{"body", "content", "contents", "text", "data", "message", "payload", "subject", "title", "attachment", "query"}
	DefaultSendTools = []string{"http-fetch"}
)

// NewLevel2 builds the level-2 check from its options.
func NewLevel2(opts Level2Options, log *slog.Logger) *Level2 {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l := &Level2{opts: opts, flows: opts.Flows, log: log,
		targets: set(opts.TargetArgs, DefaultTargetArgs), bodies: set(opts.BodyArgs, DefaultBodyArgs),
		send: set(opts.SendTools, DefaultSendTools), trusted: map[string]bool{}, bg: make(chan struct{}, 4)}
	if l.flows == nil {
		l.flows = DefaultFlows()
	}
	for _, s := range opts.TrustedSpaces {
		l.trusted["space:"+s] = true
	}
	for _, s := range opts.TrustedMCP {
		l.trusted["mcp:"+s] = true
	}
	ob := opts.OriginBytes
	if ob <= 0 {
		ob = 512 << 10
	}
	l.callers = newOriginsLRU(orDefault(opts.MaxCallers, 256), ob)
	l.turns = newOriginsLRU(orDefault(opts.MaxTurns, 1024), ob)
	l.verifier = newVerifier(opts)
	return l
}

func set(given, def []string) map[string]bool {
	if given == nil {
		given = def
	}
	m := make(map[string]bool, len(given))
	for _, s := range given {
		m[strings.ToLower(s)] = true
	}
	return m
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// SetVerifier sets a model verifier once one exists (the engine's model);
// nil goes back to the verifier without a model.
func (l *Level2) SetVerifier(v Verifier) { l.model.Store(&v) }

func (l *Level2) modelVerifier() Verifier {
	if p := l.model.Load(); p != nil {
		return *p
	}
	return l.opts.Verifier
}

// SetTask sets where the verifier reads each caller's current task (the
// recommender's, set by `airs task` and PUT /v1/context), for a task
// source that exists only once the Manager does.
func (l *Level2) SetTask(f func(caller string) string) { l.task.Store(&f) }

func (l *Level2) taskOf(caller string) string {
	if f := l.task.Load(); f != nil {
		return (*f)(caller)
	}
	if l.opts.Task != nil {
		return l.opts.Task(caller)
	}
	return ""
}

// ToolClass is what a tool does as level 2 sees it.
type ToolClass string

const (
	ClassRead        ToolClass = "read"        // Tool.ReadOnly
	ClassWrite       ToolClass = "write"       // changes something, destroys nothing
	ClassSend        ToolClass = "send"        // sends data out (a network tool)
	ClassDestructive ToolClass = "destructive" // Tool.Destructive
)

// ClassOf is the tool's class: destructive first, then send (a tool that
// requires a Network capability or is listed in SendTools), read-only,
// write.
func (l *Level2) ClassOf(t *Tool) ToolClass {
	switch {
	case t.Destructive:
		return ClassDestructive
	case l.send[t.Name]:
		return ClassSend
	case !t.ReadOnly && reSend.MatchString(toolText(t)):
		// A tool that says it sends or publishes is held to it: a claim
		// that makes the checks stricter is safe to believe.
		return ClassSend
	}
	for _, c := range t.CapabilityRequired {
		if c.Kind == "Network" {
			return ClassSend
		}
	}
	if t.ReadOnly {
		return ClassRead
	}
	return ClassWrite
}

// Level2Result is what the check found about one call; its audit record
// and Result carry Labels and Verdict.
type Level2Result struct {
	Labels provenance.Args
	Class  ToolClass
	// Hold: the call waits for a person, who sees this reason. Deny: it is
	// refused. Flag: it goes ahead, queued for review with this reason.
	Hold, Deny, Flag string
	// Verdict is the verifier's ("aligned", "misaligned", "unsure",
	// "skipped") and Reason its reason.
	Verdict, Reason string

	later *VerifyInput // a read the model verifier judges after the fact
}

// level2Input is the part of a call the check reads.
type level2Input struct {
	caller, provider, intent, turn string
	tool                           *Tool
	params                         any
	anomaly                        AnomalyLevel
	descs                          *provenance.Origins // outside tools' descriptions (nil: none)
}

// judge runs the provenance, flow and verifier checks of one call.
func (l *Level2) judge(ctx context.Context, in level2Input) Level2Result {
	r := Level2Result{Class: l.ClassOf(in.tool)}
	r.Labels = l.labelsOf(in)
	rule, arg, from := l.checkFlows(in, r.Class, r.Labels)
	if rule != nil {
		reason := flowReason(in.tool.Name, arg, from, rule)
		switch rule.Action {
		case FlowDeny:
			r.Deny = reason
		default:
			r.Hold = reason
		}
	}
	v := l.verify(ctx, in, r, &r.later)
	r.Verdict, r.Reason = v.Verdict, v.Reason
	if v.Verdict == VerdictMisaligned || (v.Verdict == VerdictUnsure && l.opts.Unsure == "hold") {
		why := "the intent verifier judged it " + v.Verdict + ": " + v.Reason
		switch {
		case r.Hold != "" || r.Deny != "":
			// the flow is the first reason; the verdict is in the record
		case r.Class == ClassRead:
			r.Flag = why // read-only: checked after the fact
		default:
			r.Hold = why
		}
	}
	return r
}

// labelsOf finds the labels of each top-level argument.
func (l *Level2) labelsOf(in level2Input) provenance.Args {
	m, ok := in.params.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	callerO := l.callers.peek(in.caller)
	var turnO *provenance.Origins
	if in.turn != "" {
		turnO = l.turns.peek(in.turn)
	}
	out := provenance.Args{}
	closed := l.enumArgs(in.tool)
	for name, v := range m {
		var labels provenance.Set
		strs := stringsOf(v, nil)
		for _, s := range strs {
			if in.intent != "" && provenance.InWords(s, in.intent) {
				labels = labels.Union(userLabel)
				continue
			}
			if closed[name] {
				// One of a closed list the configuration wrote (a space's
				// name): that it also occurs in some text says nothing.
				continue
			}
			if callerO != nil {
				labels = labels.Union(callerO.Find(s))
			}
			if in.descs != nil {
				labels = labels.Union(in.descs.Find(s))
			}
			if turnO != nil {
				labels = labels.Union(turnO.Find(s))
				// A model writes what it has seen: an argument of a later
				// step that is not the user's carries the turn's labels.
				labels = labels.Union(turnO.All())
			}
		}
		if len(labels) > 0 {
			out[name] = labels
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// enumArgs are the top-level parameters whose schema is an enum, per tool
// version (cached).
func (l *Level2) enumArgs(t *Tool) map[string]bool {
	key := t.Name + "@" + t.Version
	if v, ok := l.enums.Load(key); ok {
		return v.(map[string]bool)
	}
	var s struct {
		Properties map[string]struct {
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	m := map[string]bool{}
	if json.Unmarshal(t.Parameters, &s) == nil {
		for k, p := range s.Properties {
			if len(p.Enum) > 0 {
				m[k] = true
			}
		}
	}
	l.enums.Store(key, m)
	return m
}

var userLabel = provenance.Of(provenance.Label{Kind: provenance.User, Trusted: true})

// stringsOf appends the string leaves of a decoded JSON value (numbers and
// booleans too, as written: an amount copied from a document is data from
// it as much as a name is).
func stringsOf(v any, out []string) []string {
	switch x := v.(type) {
	case string:
		return append(out, x)
	case json.Number:
		return append(out, x.String())
	case float64:
		return out // from a plain Unmarshal: too short to tell anyway
	case map[string]any:
		for _, e := range x {
			out = stringsOf(e, out)
		}
	case []any:
		for _, e := range x {
			out = stringsOf(e, out)
		}
	}
	return out
}

// observe records what a delivered call showed its caller: the string
// values of its output, labelled with the output's origin.
func (l *Level2) observe(in level2Input, args provenance.Args, out json.RawMessage) provenance.Set {
	labels := l.outputLabels(in, args)
	if len(labels) == 0 || len(out) == 0 {
		return labels
	}
	var v any
	if json.Unmarshal(out, &v) != nil {
		return labels
	}
	// Echoes of the call's own arguments are the arguments, not the
	// tool's data: a read-file result's "space" is what the caller sent.
	echo := stringsOf(in.params, nil)
	texts := slices.DeleteFunc(stringsOf(v, nil), func(s string) bool { return slices.Contains(echo, s) })
	l.callers.get(in.caller).Observe(texts, labels)
	if in.turn != "" {
		l.turns.get(in.turn).Observe(texts, labels)
	}
	return labels
}

// outputLabels is where a tool's output comes from: the file of a space
// tool (its space and path arguments), an MCP server (provider mcp:NAME),
// a network host (a url argument), plus the untrusted labels of its
// inputs — a summary of a document is that document's text.
func (l *Level2) outputLabels(in level2Input, args provenance.Args) provenance.Set {
	var labels provenance.Set
	for _, s := range args {
		labels = labels.Union(s.Untrusted())
	}
	m, _ := in.params.(map[string]any)
	str := func(k string) string { s, _ := m[k].(string); return s }
	if name, ok := strings.CutPrefix(in.provider, "mcp:"); ok {
		labels = labels.Union(provenance.Of(provenance.Label{Kind: provenance.MCP, Source: name, Trusted: l.trusted["mcp:"+name]}))
	}
	if sp := str("space"); sp != "" {
		src := sp + "/" + strings.TrimPrefix(str("path"), "./")
		if in.tool.Name == "list-files" || str("path") == "" {
			src = sp + "/" // a listing: the names of the files are its data
		}
		labels = labels.Union(provenance.Of(provenance.Label{Kind: provenance.Space, Source: src, Trusted: l.trusted["space:"+sp]}))
	}
	if u := str("url"); u != "" && l.ClassOf(in.tool) == ClassSend {
		labels = labels.Union(provenance.Of(provenance.Label{Kind: provenance.Network, Source: hostOfURL(u)}))
	}
	return labels
}

func hostOfURL(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.Contains(rest[i:], "]") {
		rest = rest[:i]
	}
	return strings.ToLower(rest)
}

// originsLRU keeps an Origins per key (caller or turn), the least recently
// used dropped past max.
type originsLRU struct {
	mu     sync.Mutex
	max    int
	budget int
	m      map[string]*lruEntry
	tick   uint64
}

type lruEntry struct {
	o    *provenance.Origins
	used uint64
}

func newOriginsLRU(max, budget int) *originsLRU {
	return &originsLRU{max: max, budget: budget, m: map[string]*lruEntry{}}
}

// peek returns the key's Origins or nil, without creating one.
func (c *originsLRU) peek(key string) *provenance.Origins {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.m[key]; e != nil {
		c.tick++
		e.used = c.tick
		return e.o
	}
	return nil
}

func (c *originsLRU) get(key string) *provenance.Origins {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tick++
	if e := c.m[key]; e != nil {
		e.used = c.tick
		return e.o
	}
	if len(c.m) >= c.max {
		oldest, at := "", ^uint64(0)
		for k, e := range c.m {
			if e.used < at {
				oldest, at = k, e.used
			}
		}
		delete(c.m, oldest)
	}
	e := &lruEntry{o: provenance.NewOrigins(c.budget), used: c.tick}
	c.m[key] = e
	return e.o
}

// logSkip says once why the verifier is not judging calls.
func (l *Level2) logSkip(reason string) {
	l.skipOnce.Do(func() { l.log.Warn("level 2: the intent verifier is skipped", "reason", reason) })
}

// Level2Call is a call as Judge sees it.
type Level2Call struct {
	Caller, Provider, Intent, Turn string
	Tool                           *Tool
	Params                         any // decoded JSON (map[string]any)
	Anomaly                        AnomalyLevel
}

// Judge runs the provenance, flow and verifier checks on a call without
// running it: what the Manager does in the intent stage, for tools and
// benchmarks that measure the check alone.
func (l *Level2) Judge(ctx context.Context, c Level2Call) Level2Result {
	return l.judge(ctx, level2Input{caller: c.Caller, provider: c.Provider, intent: c.Intent, turn: c.Turn,
		tool: c.Tool, params: c.Params, anomaly: c.Anomaly})
}
