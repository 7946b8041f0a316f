package chains

import (
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// RegistryCatalog is the Catalog over a pipeline.Registry and the access
// policy the Manager uses: a tool is callable when some provider offers it,
// the caller may reach that provider (capability level 1), the caller holds
// every capability the tool requires (level 3), and the tool is not past
// its sunset. Its errors are pipeline's (ToolNotFound,
// ChannelCapabilityDenied, ToolCapabilityDenied, ToolDeprecated), so
// pipeline.KindOf works on them.
//
// Capabilities that depend on a call's arguments (the builtin space tools
// check ReadSpace(<space>) per call) cannot be known here; such a call fails
// when it runs, like any other call.
type RegistryCatalog struct {
	Registry *pipeline.Registry
	Policy   pipeline.AccessPolicy // nil: pipeline.AllowAll, as in the Manager
	Now      func() time.Time      // for sunsets; nil: time.Now
}

// Tool implements Catalog.
func (rc RegistryCatalog) Tool(caller, name string) (pipeline.Tool, error) {
	policy := rc.Policy
	if policy == nil {
		policy = pipeline.AllowAll{}
	}
	now := time.Now
	if rc.Now != nil {
		now = rc.Now
	}
	var first error
	for _, reg := range rc.Registry.Providers(name) {
		err := rc.check(policy, caller, reg, now())
		if err == nil {
			return reg.Tool, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &pipeline.ToolNotFound{Tool: name}
	}
	return pipeline.Tool{}, first
}

func (rc RegistryCatalog) check(policy pipeline.AccessPolicy, caller string, reg pipeline.Registered, now time.Time) error {
	t := reg.Tool
	if d := t.Deprecation; d != nil && !now.Before(d.Sunset) {
		return &pipeline.ToolDeprecated{Tool: t.Name, Sunset: d.Sunset, Replacement: d.Replacement}
	}
	if !policy.CanReach(caller, reg.Provider) {
		return &pipeline.ChannelCapabilityDenied{Caller: caller, Provider: reg.Provider}
	}
	var missing []pipeline.Capability
	for _, c := range t.CapabilityRequired {
		if _, bound := c.ParamRef(); bound {
			// ReadSpace($space): which space is known only per call (the
			// argument may be a template); the pipeline's stage 3 binds
			// and checks it at call time.
			continue
		}
		if !policy.Holds(caller, c) {
			missing = append(missing, c)
		}
	}
	if missing != nil {
		return &pipeline.ToolCapabilityDenied{Required: missing}
	}
	return nil
}
