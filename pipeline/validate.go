package pipeline

import "encoding/json"

// Validate checks params against the registered tool's parameters schema
// exactly as stage 4 does (lenient defaults included), without calling it.
// The selector uses it to check a model's call before proposing it, so the
// two never disagree on what is valid. It returns *ToolNotFound for a tool
// the registry does not have and *SchemaValidationFailed listing every error, or *PatternTimeout when a
// pattern could not be checked in time.
func (m *Manager) Validate(t Tool, params json.RawMessage) error {
	cands := m.reg.candidates(t.Name, t.Version)
	if len(cands) == 0 {
		return &ToolNotFound{Tool: t.Name}
	}
	e := cands[0]
	dp, err := decodeParams(t.Name, params, JSON)
	if err != nil {
		return err
	}
	if e.tool.Lenient && e.params.defaults != nil {
		e.params.defaults.applyDefaults(dp.value)
	}
	fes, timedOut := e.params.validate(dp.value)
	if timedOut != nil {
		return timedOut.of(e.tool.Name, false)
	}
	if fes != nil {
		return &SchemaValidationFailed{Tool: e.tool.Name, Errors: fes}
	}
	return nil
}
