package pipeline

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
)

// memAudit is an AuditSink that keeps records in memory.
type memAudit struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (a *memAudit) Append(r *audit.Record) error {
	a.mu.Lock()
	a.recs = append(a.recs, *r)
	a.mu.Unlock()
	return nil
}

func (a *memAudit) last() audit.Record {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.recs[len(a.recs)-1]
}

// fakeClock is a settable wall clock for sunsets, breakers and rate limits.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

var echo = HandlerFunc(func(ctx context.Context, p json.RawMessage, c *Call) (json.RawMessage, error) {
	return p, nil
})

func objSchema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if required == nil {
		req = []byte("[]")
	}
	return json.RawMessage(`{"type":"object","properties":` + props + `,"required":` + string(req) + `}`)
}

func tool(name string) Tool {
	return Tool{Name: name, Version: "1.0.0", Parameters: objSchema(`{}`), Trust: TL2, LatencyClass: Fast, Idempotent: true}
}

type env struct {
	reg   *Registry
	m     *Manager
	audit *memAudit
	clock *fakeClock
}

// newEnv builds a registry and a Manager with an in-memory audit and a fake
// clock; mod adjusts the config.
func newEnv(t *testing.T, mod func(*Config)) *env {
	t.Helper()
	e := &env{reg: NewRegistry(RegistryConfig{}), audit: &memAudit{},
		clock: &fakeClock{t: time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)}}
	cfg := Config{Registry: e.reg, Audit: e.audit, Now: e.clock.Now}
	if mod != nil {
		mod(&cfg)
	}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.m = m
	t.Cleanup(func() { m.Close() })
	return e
}

func (e *env) register(t *testing.T, prov string, tl Tool, h Handler) {
	t.Helper()
	if err := e.reg.Register(prov, tl, h); err != nil {
		t.Fatal(err)
	}
}

func (e *env) call(name, params string) (*Result, error) {
	return e.m.Call(context.Background(), Request{Tool: name, Params: []byte(params), Caller: "alice"})
}
