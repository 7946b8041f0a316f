package server

// Each endpoint takes the input its work needs and no more, and a request
// is charged to the caller's rate limit by the work it asks for, not as
// one request: a request of 8 KiB of text costs selection eight times what
// a sentence does, and a plan costs a selection per part of the request.
// Heavy work is charged by the CPU it used, when that comes to more: a
// token pays for about what a light request costs
// (Config.HeavyCPUPerToken), so an agent's rate limit bounds the share of
// a core its heavy work takes, whatever its input's size says. What it
// owes is paid before its next request that costs, its next /v1/call
// included.
//
// The charge is taken from the agent's one bucket (Backend.Admit, the one
// its calls take from), one token at a time: a request is admitted when
// the caller owes nothing and one token is there (before its body is
// read, so a flood of bad requests is limited too); once its input is
// read, the rest of its cost is owed, and paid from the bucket before the
// caller's next costly request is admitted. Nothing is charged twice and
// nothing is lost when a payment stops at an empty bucket: what was paid
// stays paid.

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limits bounds the input of each endpoint; zero values take the defaults
// in brackets. The names after each field are its airs.yaml keys.
type Limits struct {
	SelectText   int // bytes of /v1/select's "text" [8 KiB] (http.limits.select_text)
	PlanText     int // bytes of /v1/plan's "text" [4 KiB] (http.limits.plan_text)
	PlanParts    int // parts (sentences, steps joined by "then") of /v1/plan's "text" [16] (http.limits.plan_parts)
	ChatText     int // bytes of /v1/chat's "text" [8 KiB] (http.limits.chat_text)
	PipelineYAML int // bytes of /v1/pipelines/run's "yaml" [64 KiB] (http.limits.pipeline_yaml)

	// Floods (flood.go): requests a second, and at once, from one client
	// address, before anything else is done with them [1000, 1000]
	// (http.limits.per_address_per_second, http.limits.per_address_burst).
	PerAddressPerSecond int
	PerAddressBurst     int

	// Heavy work (heavy.go): a /v1/select, /v1/plan, /v1/chat or
	// /v1/pipelines/run whose text is over HeavyText bytes, or a /v1/call
	// whose body is over HeavyCallBody bytes, runs when it has a slot: at
	// most HeavyPerAgent of one agent at once [1], HeavyTotal of all at
	// once [one less than the cores Go runs on, at least 1]
	// (http.limits.heavy_text [1 KiB], heavy_call_body [64 KiB],
	// heavy_per_agent, heavy_total).
	HeavyText     int
	HeavyCallBody int
	HeavyPerAgent int
	HeavyTotal    int
}

// DefaultHeavyCPUPerToken is Config.HeavyCPUPerToken's default: about
// what a light request costs.
const DefaultHeavyCPUPerToken = time.Millisecond

// DefaultLimits are the limits a zero Limits takes.
// HeavyTotal's default depends on the machine: DefaultLimits leaves it 0.
var DefaultLimits = Limits{SelectText: 8 << 10, PlanText: 4 << 10, PlanParts: 16, ChatText: 8 << 10, PipelineYAML: 64 << 10,
	PerAddressPerSecond: 1000, PerAddressBurst: 1000, HeavyText: 1 << 10, HeavyCallBody: 64 << 10, HeavyPerAgent: 1}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.SelectText <= 0 {
		l.SelectText = d.SelectText
	}
	if l.PlanText <= 0 {
		l.PlanText = d.PlanText
	}
	if l.PlanParts <= 0 {
		l.PlanParts = d.PlanParts
	}
	if l.ChatText <= 0 {
		l.ChatText = d.ChatText
	}
	if l.PipelineYAML <= 0 {
		l.PipelineYAML = d.PipelineYAML
	}
	if l.PerAddressPerSecond <= 0 {
		l.PerAddressPerSecond = d.PerAddressPerSecond
	}
	if l.PerAddressBurst <= 0 {
		l.PerAddressBurst = max(d.PerAddressBurst, l.PerAddressPerSecond)
	}
	if l.HeavyText <= 0 {
		l.HeavyText = d.HeavyText
	}
	if l.HeavyCallBody <= 0 {
		l.HeavyCallBody = d.HeavyCallBody
	}
	if l.HeavyPerAgent <= 0 {
		l.HeavyPerAgent = d.HeavyPerAgent
	}
	if l.HeavyTotal <= 0 {
		l.HeavyTotal = defaultHeavyTotal()
	}
	return l
}

// TooLarge is an input over its endpoint's limit (413). A Backend answers
// it too, for a limit only it can measure (the parts of a plan request).
type TooLarge struct {
	Endpoint string // "POST /v1/select"
	What     string // `"text"`, `parts in "text"`
	Unit     string // "bytes", "parts"
	Actual   int
	Max      int
	Setting  string // the airs.yaml key that raises it: "http.limits.select_text"
}

func (e *TooLarge) Error() string {
	return fmt.Sprintf("%s has %d %s; %s takes at most %d", e.What, e.Actual, e.Unit, e.Endpoint, e.Max)
}

func writeTooLarge(w http.ResponseWriter, e *TooLarge) {
	writeErrorBody(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "payload_too_large",
		"message": e.Error(), "limit": e.Max,
		"hint": "send less (split the request), or raise " + e.Setting + " in airs.yaml on the server"})
}

// checkText answers 413 when text, the field named what, is over max
// bytes.
func checkText(w http.ResponseWriter, endpoint, what, text string, max int, setting string) bool {
	if len(text) > max {
		writeTooLarge(w, &TooLarge{Endpoint: endpoint, What: what, Unit: "bytes", Actual: len(text), Max: max, Setting: setting})
		return false
	}
	return true
}

// costUnit is the bytes of input one token of the rate limit pays for;
// a Backend charges the work only it can count with Owe (a plan: one
// token per part of the request past the first, each a selection).
const costUnit = 1 << 10

// costOf is the work, in rate-limit tokens, of a request with n bytes of
// input: one, and one more per started unit past the first.
func costOf(n, unit int) int {
	if n <= unit {
		return 1
	}
	return 1 + (n-1)/unit
}

type oweKey struct{}

// Owe charges n more tokens of work to the request's caller, paid before
// its next costly request: a Backend says so for work that the input's
// size does not tell (the parts of a plan). Outside a costly request it
// does nothing.
func Owe(ctx context.Context, n int) {
	if f, ok := ctx.Value(oweKey{}).(func(int)); ok && n > 0 {
		f(n)
	}
}

type planPartsKey struct{}

// WithPlanParts tells a Backend's Plan the most parts a request may have.
func WithPlanParts(ctx context.Context, max int) context.Context {
	return context.WithValue(ctx, planPartsKey{}, max)
}

// PlanParts is the most parts a plan request may have (0: no limit): a
// Backend's Plan answers *TooLarge past it.
func PlanParts(ctx context.Context) int {
	n, _ := ctx.Value(planPartsKey{}).(int)
	return n
}

// owed is what each caller still owes of the requests it was admitted for.
type owed struct {
	mu sync.Mutex
	by map[string]int // callers are the configured agents: a small set
}

// charge admits a costly request of caller: what the caller owes is
// paid first, token by token, then one token admits the request. It
// answers the Backend's *pipeline.RateLimited when the bucket runs dry on
// the way (what was paid stays paid).
func (s *Server) charge(caller string) error {
	if err := s.payOwed(caller); err != nil {
		return err
	}
	return s.backend.Admit(caller)
}

// payOwed pays what caller owes from its bucket, token by token; it
// answers the Backend's *pipeline.RateLimited when the bucket runs dry on
// the way (what was paid stays paid).
func (s *Server) payOwed(caller string) error {
	for {
		s.owed.mu.Lock()
		n := s.owed.by[caller]
		s.owed.mu.Unlock()
		if n <= 0 {
			break
		}
		if err := s.backend.Admit(caller); err != nil {
			return err
		}
		s.owed.mu.Lock()
		s.owed.by[caller]--
		s.owed.mu.Unlock()
	}
	return nil
}

// owe records the rest of an admitted request's cost, in tokens, once its
// input is known (cost tokens in all, the one that admitted it included),
// and returns the request's context with Owe for what the Backend counts,
// and the request's cost so far, which heavy work adds its CPU to.
func (s *Server) owe(r *http.Request, cost int) (context.Context, *requestCost) {
	c := s.newRequestCost(Caller(r.Context()), 1)
	c.owe(cost - 1)
	return context.WithValue(r.Context(), oweKey{}, c.owe), c
}

// requestCost is what one request has been charged, in tokens, the one
// that admitted it included: its input's size, what the Backend owed for
// it, and what its CPU came to beyond that (heavy work, chargeCPU).
type requestCost struct {
	s      *Server
	caller string
	tokens atomic.Int64

	cpuMu sync.Mutex
	cpu   time.Duration // the heavy work's CPU charged so far
}

func (s *Server) newRequestCost(caller string, admitted int) *requestCost {
	c := &requestCost{s: s, caller: caller}
	c.tokens.Store(int64(admitted))
	return c
}

// owe charges n more tokens to the request, paid before its caller's next
// request that costs.
func (c *requestCost) owe(n int) {
	if n > 0 {
		c.tokens.Add(int64(n))
		c.s.oweTokens(c.caller, n)
	}
}

// chargeCPU charges heavy work by the CPU it used: one token per
// cpuPerToken of all the request's heavy work so far (the reading of its
// body, a built-in tool's run, on whichever goroutine), less what the
// request was charged already (its size, the Backend's count, earlier
// heavy work), so that a rate limit bounds the share of a core an agent's
// heavy work takes, however cheap its input looks.
func (c *requestCost) chargeCPU(cpu, cpuPerToken time.Duration) {
	if cpuPerToken <= 0 {
		return
	}
	c.cpuMu.Lock()
	defer c.cpuMu.Unlock()
	c.cpu += cpu
	c.owe(int(c.cpu/cpuPerToken) - int(c.tokens.Load()))
}

// oweFloodTax makes caller owe a token for an early request of a client
// that keeps asking before its Retry-After (flood.go), unless it owes
// floodTaxMax already.
func (s *Server) oweFloodTax(caller string) {
	s.owed.mu.Lock()
	defer s.owed.mu.Unlock()
	if s.owed.by == nil {
		s.owed.by = map[string]int{}
	}
	if s.owed.by[caller] < floodTaxMax {
		s.owed.by[caller]++
	}
}

func (s *Server) oweTokens(caller string, n int) {
	if n <= 0 {
		return
	}
	s.owed.mu.Lock()
	defer s.owed.mu.Unlock()
	if s.owed.by == nil {
		s.owed.by = map[string]int{}
	}
	s.owed.by[caller] += n
}
