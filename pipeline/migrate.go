package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
)

// Version migration.
//
// A tool's new major version may accept calls written for an older major
// version. It declares, per old major, a migration: another tool, registered
// by the same provider, whose parameters schema is the old params format and
// whose output is the new params. A call pinned to the old version
// (Request.Version "1", "1.x", "1.4.2") for which no provider still offers a
// matching version is then served by the newest version that declares a
// migration from major 1:
//
//	stage 2  lookup finds no 1.x; finds 2.x declaring {from: "1", tool: t-v1-to-v2}
//	stage 3  level 1 (the caller may reach the provider); then the migration:
//	         its own required capabilities (bound to the old params), the old
//	         params validated against its schema, its handler run (budget and
//	         panics as for any handler), its output checked against its
//	         return_schema; the output replaces the params. Then level 2 and
//	         level 3 for the new version, on the migrated params.
//	stage 4  the migrated params are validated against the new version's
//	         schema; a failure is SchemaValidationFailed naming the migration
//	         (the provider's bug, not the caller's).
//
// The Result and the audit record carry both versions (Version and
// MigratedFrom) and the audit record names the migration tool. Migrations
// do not chain: a 3.x that still accepts 1.x calls declares a migration from
// 1 itself, so that one call runs at most one mapping that its author tested.
//
// The migration is a tool like any other: it can be listed, shown and called
// directly (which shows what old params become), and it is validated the same
// way. What it is not is a place to do work: it should be a pure mapping, as
// it runs before the new version's intent and capability checks.

// Migration is one declared mapping, in the new version's Tool.
type Migration struct {
	// From is the old major version whose calls are mapped: "1" (also
	// written "v1", "1.x" or "1.*").
	From string `json:"from"`
	// Tool names the migration tool, registered by the same provider.
	Tool string `json:"tool"`
	// Version pins the migration tool's version; "" takes the highest.
	Version string `json:"version,omitempty"`
}

// String is how errors and the audit log name a migration: tool@version.
func (mg Migration) String() string {
	if mg.Version == "" {
		return mg.Tool
	}
	return mg.Tool + "@" + mg.Version
}

// majorOf is the numeric major version of a version or a pin ("v1.2" → 1).
func majorOf(v string) (uint64, bool) {
	v = strings.TrimPrefix(v, "v")
	head, _, _ := strings.Cut(v, ".")
	n, err := strconv.ParseUint(head, 10, 64)
	return n, err == nil
}

// fromMajor parses Migration.From: a major version alone, with an optional
// "v" prefix and ".x"/".*" suffix.
func fromMajor(from string) (uint64, bool) {
	f := strings.TrimPrefix(from, "v")
	for _, suf := range []string{".x", ".X", ".*"} {
		f = strings.TrimSuffix(f, suf)
	}
	if strings.Contains(f, ".") {
		return 0, false
	}
	return majorOf(f)
}

// checkMigrations is Register's check of t.Migrations: each names an older
// major than t's own, at most once, and a migration tool the provider has
// already registered (so a broken declaration fails at registration, not on
// a caller's first old-format call). r.mu must be held.
func (r *Registry) checkMigrations(providerID string, t Tool) error {
	if len(t.Migrations) == 0 {
		return nil
	}
	own, ok := majorOf(t.Version)
	if !ok {
		return fmt.Errorf("version %q has no numeric major: only such versions can declare migrations", t.Version)
	}
	seen := map[uint64]bool{}
	for _, mg := range t.Migrations {
		from, ok := fromMajor(mg.From)
		if !ok {
			return fmt.Errorf("migration from %q: want an old major version such as \"1\"", mg.From)
		}
		if from >= own {
			return fmt.Errorf("migration from %q: not older than version %s", mg.From, t.Version)
		}
		if seen[from] {
			return fmt.Errorf("two migrations from major %d", from)
		}
		seen[from] = true
		if mg.Tool == t.Name {
			return fmt.Errorf("migration from %q: the migration tool must be another tool than %s", mg.From, t.Name)
		}
		if r.pick(r.versions[pnKey{providerID, mg.Tool}], mg.Version) == nil {
			return fmt.Errorf("migration from %q uses tool %s, which provider %s has not registered: register the migration tool first",
				mg.From, mg, providerID)
		}
	}
	return nil
}

// migrationFor returns e's migration for calls pinned to pin, if it has one.
func (e *entry) migrationFor(pin string) (Migration, bool) {
	want, ok := majorOf(pin)
	if !ok {
		return Migration{}, false
	}
	for _, mg := range e.tool.Migrations {
		if from, _ := fromMajor(mg.From); from == want {
			return mg, true
		}
	}
	return Migration{}, false
}

// migrationCandidates returns, per provider offering name, the highest
// version that declares a migration for calls pinned to pin. Lookup asks
// only when no version matches pin.
func (r *Registry) migrationCandidates(name, pin string) []*entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*entry
	for _, latest := range r.byName[name] {
		for _, e := range r.versions[pnKey{latest.prov.id, name}] {
			if _, ok := e.migrationFor(pin); ok {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

// migrationEntry returns the registered migration tool of provider.
func (r *Registry) migrationEntry(provider string, mg Migration) *entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.pick(r.versions[pnKey{provider, mg.Tool}], mg.Version)
}

// migrating is what a call being migrated carries through the stages.
type migrating struct {
	from string    // the caller's pin
	decl Migration // the declaration on the new version
	name string    // the migration tool as run: name@version
}

// migrate runs cs.mig's migration tool on the caller's params and replaces
// them with its output (see the package comment above for where it runs).
func (m *Manager) migrate(ctx context.Context, cs *callState) error {
	req, target := cs.req, cs.entry
	me := m.reg.migrationEntry(target.prov.id, cs.mig.decl)
	if me == nil {
		// Registration checked it; the provider deregistered it since.
		m.log.Warn("migration tool gone", "provider", target.prov.id, "tool", target.tool.Name,
			"migration", cs.mig.decl.String())
		return &ToolNotFound{Tool: cs.mig.decl.Tool, Provider: target.prov.id, Version: cs.mig.decl.Version}
	}
	cs.mig.name = me.tool.Name + "@" + me.tool.Version
	var missing []Capability
	for _, c := range me.tool.CapabilityRequired {
		if c = c.Bind(cs.params.value); !m.policy.Holds(req.Caller, c) {
			missing = append(missing, c)
		}
	}
	if missing != nil {
		return &ToolCapabilityDenied{Required: missing}
	}
	old := cs.params
	if me.tool.Lenient && me.params.defaults != nil && me.params.defaults.applyDefaults(old.value) {
		var err error
		if old.json, err = json.Marshal(old.value); err != nil {
			return paramsError(me.tool.Name, err.Error())
		}
	}
	// Invalid old-format params are the caller's mistake: the error names the
	// migration tool, whose schema is the old format.
	fes, timedOut := me.params.validate(old.value)
	if timedOut != nil {
		return timedOut.of(me.tool.Name, false)
	}
	if fes != nil {
		return &SchemaValidationFailed{Tool: me.tool.Name, Errors: fes}
	}

	out, err := m.runMigration(ctx, cs, me, old.json)
	if err != nil {
		return err
	}
	v, derr := decodeJSON(out)
	if derr != nil {
		return &SchemaValidationFailed{Tool: target.tool.Name, Migration: cs.mig.name,
			Errors: []FieldError{{Message: "migration output is not valid JSON: " + derr.Error()}}}
	}
	if me.returns != nil {
		fes, timedOut := me.returns.validate(v)
		if timedOut != nil {
			return timedOut.of(me.tool.Name, true)
		}
		if fes != nil {
			return &SchemaValidationFailed{Tool: me.tool.Name, Errors: fes, Output: true}
		}
	}
	cs.params = decodedParams{json: out, value: v}
	return nil
}

// runMigration runs the migration tool's handler as stage 6 runs a tool's:
// in its own goroutine (tracked, so Close waits for it), a panic contained,
// the call answered when its context ends even if the handler goes on.
func (m *Manager) runMigration(ctx context.Context, cs *callState, me *entry, params json.RawMessage) (json.RawMessage, error) {
	call := &Call{ID: cs.req.CallID, Tool: me.tool.Name, Provider: me.prov.id, Caller: cs.req.Caller}
	ch := make(chan execResult, 1)
	m.handlers.Add(1)
	go func() {
		defer m.handlers.Done()
		defer func() {
			if p := recover(); p != nil {
				ch <- execResult{err: &ProviderCrashed{Provider: me.prov.id, Panic: fmt.Sprint(p), Stack: debug.Stack()}, panicked: true}
			}
		}()
		out, err := me.handler.Invoke(ctx, params, call)
		ch <- execResult{out: out, err: err}
	}()
	var r execResult
	select {
	case r = <-ch:
	case <-ctx.Done():
		return nil, m.stopped(ctx, cs)
	}
	switch {
	case r.panicked:
		m.log.Error("migration panicked", "provider", me.prov.id, "migration", cs.mig.name, "call_id", cs.req.CallID,
			"panic", r.err.(*ProviderCrashed).Panic)
		return nil, r.err
	case r.err == nil:
		return r.out, nil
	case ctx.Err() != nil:
		return nil, m.stopped(ctx, cs)
	}
	var k kinder
	if errors.As(r.err, &k) {
		if _, sentinel := k.(kindError); !sentinel {
			return nil, r.err
		}
	}
	return nil, &ProviderRejected{Code: "migration", Message: cs.mig.name + ": " + r.err.Error()}
}
