package pipeline

// AccessPolicy answers capability levels 1 and 3. Callers are agent ids set
// by the channel (never read from a request body).
type AccessPolicy interface {
	// CanReach is level 1: may caller use tools of provider at all?
	CanReach(caller, provider string) bool
	// Holds is level 3: does caller hold a capability that covers req?
	Holds(caller string, req Capability) bool
}

// AllowAll is the policy used when Config.Policy is nil: every caller
// reaches every provider and holds every capability. It fits a single-user
// CLI, where the user already has every right the tools could exercise; a
// shared server must configure a StaticPolicy.
type AllowAll struct{}

func (AllowAll) CanReach(string, string) bool  { return true }
func (AllowAll) Holds(string, Capability) bool { return true }

// StaticPolicy is a policy from configuration.
//
// Channels maps a caller to the providers it may reach; "*" as a provider
// means any, and the caller "*" is the rule for callers not listed.
// Capabilities maps a caller to what it holds (matching: Capability.Covers);
// the caller "*" lists what every caller holds.
type StaticPolicy struct {
	Channels     map[string][]string
	Capabilities map[string][]Capability
}

func (p *StaticPolicy) CanReach(caller, provider string) bool {
	provs, ok := p.Channels[caller]
	if !ok {
		provs = p.Channels["*"]
	}
	for _, q := range provs {
		if q == "*" || q == provider {
			return true
		}
	}
	return false
}

func (p *StaticPolicy) Holds(caller string, req Capability) bool {
	for _, who := range [2]string{caller, "*"} {
		for _, h := range p.Capabilities[who] {
			if h.Covers(req) {
				return true
			}
		}
	}
	return false
}
