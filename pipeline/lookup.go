package pipeline

import "slices"

// Stage 2 of a call: which registered provider serves it.

// lookup is stage 2: rank the candidates the caller may reach and take the
// first usable one.
// A dead provider found on the way is deregistered; a retired or degraded
// candidate is passed over when another can serve. When none can, the
// best-ranked candidate's reason is the answer.
func (m *Manager) lookup(cs *callState) (*entry, error) {
	req := cs.req
	cands := m.reg.candidates(req.Tool, req.Version)
	migrated := false
	if len(cands) == 0 && req.Version != "" {
		// No version matches the pin: a newer major may migrate the call.
		cands, migrated = m.reg.migrationCandidates(req.Tool, req.Version), true
	}
	if len(cands) == 0 {
		return nil, &ToolNotFound{Tool: req.Tool, Provider: req.Provider, Version: req.Version}
	}
	if req.Provider != "" && !slices.ContainsFunc(cands, func(e *entry) bool { return e.prov.id == req.Provider }) {
		// A named provider is a preference among those that offer the
		// tool; one that offers none is a mistake (a typo, a provider not
		// loaded), not something to ignore silently.
		nf := &ToolNotFound{Tool: req.Tool, Provider: req.Provider, Version: req.Version}
		for _, e := range cands {
			if !slices.Contains(nf.OfferedBy, e.prov.id) {
				nf.OfferedBy = append(nf.OfferedBy, e.prov.id)
			}
		}
		slices.Sort(nf.OfferedBy)
		return nil, nf
	}
	cands, err := m.reachable(req.Caller, cands)
	if err != nil {
		return nil, err
	}
	rank(cands, req.Provider, m.lat, len(cs.params.json))
	return m.firstUsable(cs, cands, migrated)
}

// reachable keeps the candidates the caller may reach (capability level 1),
// so that ranking chooses among them: a better-trusted provider the caller
// may not use must not hide one it may. A preferred provider the caller may
// not reach is passed over like a degraded one. When it may reach none, the
// answer is ChannelCapabilityDenied for the best-ranked candidate. cands is
// not modified (it may be the registry's own slice).
func (m *Manager) reachable(caller string, cands []*entry) ([]*entry, error) {
	for i, e := range cands {
		if m.policy.CanReach(caller, e.prov.id) {
			continue
		}
		out := slices.Clone(cands[:i])
		for _, e := range cands[i+1:] {
			if m.policy.CanReach(caller, e.prov.id) {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			all := slices.Clone(cands)
			rank(all, "", nil, 0)
			return nil, &ChannelCapabilityDenied{Caller: caller, Provider: all[0].prov.id}
		}
		return out, nil
	}
	return cands, nil
}

// firstUsable takes the first usable candidate in rank order (lookup).
func (m *Manager) firstUsable(cs *callState, cands []*entry, migrated bool) (*entry, error) {
	req := cs.req
	var first error
	for _, e := range cands {
		var why error
		if !e.prov.isAlive() {
			n := m.reg.DeregisterProvider(e.prov.id)
			m.log.Warn("provider dead: deregistered", "provider", e.prov.id, "tools", n)
			why = &ProviderUnavailable{Provider: e.prov.id, Tool: e.tool.Name, Reason: ReasonProviderDead}
		} else if d := e.tool.Deprecation; d != nil && !d.Sunset.IsZero() && !cs.wall.Before(d.Sunset) {
			why = &ToolDeprecated{Tool: e.tool.Name, Sunset: d.Sunset, Replacement: d.Replacement}
		} else if b := m.breakerFor(e); b != nil {
			if ok, retry := b.allow(cs.wall); !ok {
				why = &ProviderUnavailable{Provider: e.prov.id, Tool: e.tool.Name, Reason: ReasonCircuitOpen, RetryAfter: retry}
			} else {
				cs.brk = b
			}
		}
		if why == nil {
			if migrated {
				mg, _ := e.migrationFor(req.Version)
				cs.mig = &migrating{from: req.Version, decl: mg, name: mg.String()}
			}
			return e, nil
		}
		if first == nil {
			first = why
		}
	}
	return nil, first
}
