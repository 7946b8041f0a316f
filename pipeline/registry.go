package pipeline

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Registry holds the tools that providers (agent ids) offer. Lookup is by
// (provider, name) and by name across providers (see rank). A provider may
// register several versions of a tool; calls go to the highest unless the
// request names one.
//
// Reads (every call) take a read lock; writes (registration, a dead
// provider's removal) are rare.
type Registry struct {
	schemas *schemaCache
	order   atomic.Uint64 // registration order, the last ranking tie-break
	gen     atomic.Uint64 // bumped by every change of the tool set (Generation)
	watch   watchers      // told of every change of the tool set (Watch)

	mu        sync.RWMutex
	providers map[string]*provider
	versions  map[pnKey][]*entry // versions of one (provider, name), highest first
	byName    map[string][]*entry
	// byName holds, per tool name, the highest version of each provider, in
	// provider registration order.
}

type pnKey struct{ provider, name string }

// provider is one agent id that offers tools.
type provider struct {
	id    string
	alive atomic.Pointer[func() bool] // nil: assumed alive
	// For latency prediction: how the provider runs (a Runtime), and its
	// handlers running now (stragglers included: they still load it).
	runtime  atomic.Int32
	inflight atomic.Int64
}

// isAlive asks the provider's health function, if it has one.
func (p *provider) isAlive() bool {
	f := p.alive.Load()
	return f == nil || (*f)()
}

// entry is one registered (provider, tool, version): the description, the
// handler, and what the pipeline keeps about it (compiled schemas, stats,
// circuit breaker).
type entry struct {
	prov    *provider
	tool    Tool
	handler Handler
	params  *compiledSchema
	returns *compiledSchema // nil: no return_schema
	order   uint64

	stats toolStats
	brk   atomic.Pointer[breaker]     // created on first call, with the Manager's config
	lat   atomic.Pointer[toolLatency] // the tool's latency model, cached on first use
	// latP50 is the p50 feature (ns), refreshed every p50Every calls of the tool.
	latP50 atomic.Int64
}

// Registered is what listing and lookup return: a tool and who provides it.
type Registered struct {
	Provider string
	Tool     Tool
}

// RegistryConfig tunes a Registry; the zero value is fine.
type RegistryConfig struct {
	// RegexTimeout bounds one JSON Schema `pattern` match (default 100 ms).
	RegexTimeout time.Duration
}

// NewRegistry returns an empty registry.
func NewRegistry(cfg RegistryConfig) *Registry {
	return &Registry{
		schemas:   newSchemaCache(cfg.RegexTimeout),
		providers: map[string]*provider{},
		versions:  map[pnKey][]*entry{},
		byName:    map[string][]*entry{},
	}
}

// SetLiveness gives provider id a health function. The Manager asks it
// before calling one of the provider's tools; the first call that finds it
// false deregisters the provider (all its tools) and answers
// ProviderUnavailable. Handlers can report the same by returning an error
// that wraps ErrProviderDead. alive must be cheap: it runs on every call.
func (r *Registry) SetLiveness(id string, alive func() bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.providers[id]
	if p == nil {
		p = &provider{id: id}
		r.providers[id] = p
	}
	if alive == nil {
		p.alive.Store(nil)
	} else {
		p.alive.Store(&alive)
	}
}

// Register adds (or replaces: same provider, name and version) a tool.
// The parameters and return schemas are compiled now, so a broken schema
// fails here and not on the first call.
func (r *Registry) Register(providerID string, t Tool, h Handler) error {
	if providerID == "" {
		return errors.New("register: empty provider id")
	}
	if err := validName(t.Name); err != nil {
		return fmt.Errorf("register %s: %w", providerID, err)
	}
	if h == nil {
		return fmt.Errorf("register %s/%s: nil handler", providerID, t.Name)
	}
	if t.Trust < TL0 || t.Trust > TL3 {
		return fmt.Errorf("register %s/%s: trust level %d out of range", providerID, t.Name, t.Trust)
	}
	if t.ReadOnly && t.Destructive {
		return fmt.Errorf("register %s/%s: a tool is not both read-only and destructive", providerID, t.Name)
	}
	if t.LatencyClass < Instant || t.LatencyClass > LongRunning {
		return fmt.Errorf("register %s/%s: latency class %d out of range", providerID, t.Name, t.LatencyClass)
	}
	ps, err := r.schemas.compile(t.Parameters)
	if err != nil {
		return fmt.Errorf("register %s/%s: parameters schema: %w", providerID, t.Name, err)
	}
	var rs *compiledSchema
	if len(t.ReturnSchema) > 0 {
		if rs, err = r.schemas.compile(t.ReturnSchema); err != nil {
			return fmt.Errorf("register %s/%s: return schema: %w", providerID, t.Name, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.checkMigrations(providerID, t); err != nil {
		return fmt.Errorf("register %s/%s: %w", providerID, t.Name, err)
	}
	p := r.providers[providerID]
	if p == nil {
		p = &provider{id: providerID}
		r.providers[providerID] = p
	}
	e := &entry{prov: p, tool: t, handler: h, params: ps, returns: rs, order: r.order.Add(1)}
	k := pnKey{providerID, t.Name}
	vs := slices.DeleteFunc(slices.Clone(r.versions[k]), func(o *entry) bool { return o.tool.Version == t.Version })
	if len(vs) < len(r.versions[k]) {
		// A replacement keeps its place in the registration order.
		for _, o := range r.versions[k] {
			if o.tool.Version == t.Version {
				e.order = o.order
			}
		}
	}
	vs = append(vs, e)
	slices.SortStableFunc(vs, func(a, b *entry) int { return -compareVersions(a.tool.Version, b.tool.Version) })
	r.versions[k] = vs
	r.rebuildName(t.Name)
	return nil
}

// rebuildName recomputes byName[name]; r.mu must be held.
func (r *Registry) rebuildName(name string) {
	r.gen.Add(1)
	r.notify()
	var list []*entry
	for k, vs := range r.versions {
		if k.name == name && len(vs) > 0 {
			list = append(list, vs[0])
		}
	}
	slices.SortFunc(list, func(a, b *entry) int { return cmp.Compare(a.order, b.order) })
	if len(list) == 0 {
		delete(r.byName, name)
	} else {
		r.byName[name] = list
	}
}

// Deregister removes one version of a tool ("" removes every version).
func (r *Registry) Deregister(providerID, name, version string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := pnKey{providerID, name}
	old := r.versions[k]
	vs := slices.DeleteFunc(slices.Clone(old), func(e *entry) bool { return version == "" || e.tool.Version == version })
	if len(vs) == len(old) {
		return false
	}
	if len(vs) == 0 {
		delete(r.versions, k)
	} else {
		r.versions[k] = vs
	}
	r.rebuildName(name)
	return true
}

// DeregisterProvider removes a provider and all its tools; it returns how
// many tool versions went.
func (r *Registry) DeregisterProvider(providerID string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	names := map[string]bool{}
	for k, vs := range r.versions {
		if k.provider == providerID {
			n += len(vs)
			names[k.name] = true
			delete(r.versions, k)
		}
	}
	for name := range names {
		r.rebuildName(name)
	}
	delete(r.providers, providerID)
	return n
}

// Generation changes whenever the set of registered tools does, so that a
// reader can cache what it derives from List until it moves.
func (r *Registry) Generation() uint64 { return r.gen.Load() }

// Get returns the tool provider offers under name (highest version when
// version is "", else as Request.Version pins it), without ranking or
// liveness checks.
func (r *Registry) Get(providerID, name, version string) (Registered, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if e := r.pick(r.versions[pnKey{providerID, name}], version); e != nil {
		return Registered{Provider: providerID, Tool: e.tool}, true
	}
	return Registered{}, false
}

// pick returns the version of vs (highest first) that pin selects: the
// highest when pin is "", an exact match when there is one, else the highest
// version under pin (pinMatches); nil when none.
func (r *Registry) pick(vs []*entry, pin string) *entry {
	if len(vs) == 0 {
		return nil
	}
	if pin == "" {
		return vs[0]
	}
	for _, e := range vs {
		if e.tool.Version == pin {
			return e
		}
	}
	for _, e := range vs {
		if pinMatches(pin, e.tool.Version) {
			return e
		}
	}
	return nil
}

// pinMatches reports whether version v is under pin: pin's dot-separated
// parts, less trailing "x" or "*" wildcards, are a prefix of v's ("1" and
// "1.x" match 1.0.0 and 1.9.3; "1.2" matches 1.2.7, not 1.20.0). Parts
// compare as compareVersions does ("v1" = "1"; numbers numerically).
func pinMatches(pin, v string) bool {
	pin, v = strings.TrimPrefix(pin, "v"), strings.TrimPrefix(v, "v")
	if pin == v {
		return true
	}
	ps := strings.Split(pin, ".")
	for len(ps) > 0 && (ps[len(ps)-1] == "x" || ps[len(ps)-1] == "X" || ps[len(ps)-1] == "*") {
		ps = ps[:len(ps)-1]
	}
	vs := strings.Split(v, ".")
	if len(ps) > len(vs) {
		return false
	}
	for i, p := range ps {
		if compareVersions(p, vs[i]) != 0 {
			return false
		}
	}
	return true
}

// Providers lists who offers name (highest version each), in the order a
// call without a preferred provider would try them.
func (r *Registry) Providers(name string) []Registered {
	cands := r.candidates(name, "")
	rank(cands, "", nil, 0)
	out := make([]Registered, len(cands))
	for i, e := range cands {
		out[i] = Registered{Provider: e.prov.id, Tool: e.tool}
	}
	return out
}

// List returns every registered tool version, sorted by name, provider,
// then version (highest first).
func (r *Registry) List() []Registered {
	r.mu.RLock()
	var out []Registered
	for k, vs := range r.versions {
		for _, e := range vs {
			out = append(out, Registered{Provider: k.provider, Tool: e.tool})
		}
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Registered) int {
		return cmp.Or(cmp.Compare(a.Tool.Name, b.Tool.Name), cmp.Compare(a.Provider, b.Provider),
			-compareVersions(a.Tool.Version, b.Tool.Version))
	})
	return out
}

// candidates returns (in a fresh slice when ranking may reorder it) the entries a call for name may use:
// the highest version of each provider, or the one version pins (pick).
func (r *Registry) candidates(name, version string) []*entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if version == "" {
		l := r.byName[name]
		if len(l) < 2 {
			return l // rank does not reorder a single candidate: no copy needed
		}
		return slices.Clone(l)
	}
	var out []*entry
	for _, latest := range r.byName[name] {
		if e := r.pick(r.versions[pnKey{latest.prov.id, name}], version); e != nil {
			out = append(out, e)
		}
	}
	return out
}

// entries returns every registered entry (for metrics).
func (r *Registry) entries() []*entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []*entry
	for _, vs := range r.versions {
		out = append(out, vs...)
	}
	return out
}

func validName(n string) error {
	if n == "" {
		return errors.New("empty tool name")
	}
	for _, c := range n {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_-.", c)) {
			return fmt.Errorf("tool name %q: only letters, digits, '_', '-', '.'", n)
		}
	}
	return nil
}

// compareVersions orders dotted versions numerically where both parts are
// numbers ("1.10" > "1.9"), lexically otherwise; a leading "v" is ignored
// and "" is the lowest. It is enough for semver without pre-release rules.
func compareVersions(a, b string) int {
	a, b = strings.TrimPrefix(a, "v"), strings.TrimPrefix(b, "v")
	if a == b {
		return 0
	}
	if a == "" || b == "" {
		return cmp.Compare(len(a), len(b))
	}
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		an, aerr := strconv.ParseUint(as[i], 10, 64)
		bn, berr := strconv.ParseUint(bs[i], 10, 64)
		var c int
		if aerr == nil && berr == nil {
			c = cmp.Compare(an, bn)
		} else {
			c = cmp.Compare(as[i], bs[i])
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(as), len(bs))
}
