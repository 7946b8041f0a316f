package selector

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
)

// RegistryCatalog is the Catalog over the pipeline's registry and access
// policy: a tool is callable when the caller reaches its provider (level 1),
// holds every capability it requires (level 3), and it is not past its
// sunset. It applies the same rules the pipeline enforces at call time, so
// the prompt and the grammar never offer a call the pipeline would refuse
// for capability reasons.
type RegistryCatalog struct {
	Registry *pipeline.Registry
	Policy   pipeline.AccessPolicy // nil: AllowAll
	Now      func() time.Time
}

// Callable lists the caller's tools, the registry's preferred provider of
// each name first.
func (c *RegistryCatalog) Callable(caller string) []Entry {
	pol := c.Policy
	if pol == nil {
		pol = pipeline.AllowAll{}
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	var out []Entry
	for _, r := range c.Registry.List() {
		if d := r.Tool.Deprecation; d != nil && !d.Sunset.IsZero() && now.After(d.Sunset) {
			continue
		}
		if !pol.CanReach(caller, r.Provider) {
			continue
		}
		if t, ok := narrow(r.Tool, caller, pol); ok {
			out = append(out, Entry{Provider: r.Provider, Tool: t})
		}
	}
	return out
}

// narrow decides whether the caller may call t and returns the tool as the
// caller sees it. A capability bound to a parameter ("ReadSpace($space)")
// is held when the caller holds it for some value of that parameter's enum;
// the enum is then narrowed to those values, so a space the caller cannot
// read never reaches the prompt or the grammar. Without an enum the
// pipeline decides per call.
func narrow(t pipeline.Tool, caller string, pol pipeline.AccessPolicy) (pipeline.Tool, bool) {
	var schema map[string]any
	for _, req := range t.CapabilityRequired {
		param, bound := req.ParamRef()
		if !bound {
			if !pol.Holds(caller, req) {
				return t, false
			}
			continue
		}
		if schema == nil && json.Unmarshal(t.Parameters, &schema) != nil {
			return t, false
		}
		props, _ := schema["properties"].(map[string]any)
		ps, _ := props[param].(map[string]any)
		enum, _ := ps["enum"].([]any)
		if enum == nil {
			if !holdsAny(pol, caller, req.Kind) {
				return t, false
			}
			continue
		}
		var keep []any
		for _, v := range enum {
			if s, ok := v.(string); ok && pol.Holds(caller, pipeline.Capability{Kind: req.Kind, Arg: s}) {
				keep = append(keep, v)
			}
		}
		if len(keep) == 0 {
			return t, false
		}
		if len(keep) < len(enum) {
			if d, ok := ps["description"].(string); ok {
				ps["description"] = scrubDescription(d, enum, keep)
			}
		}
		ps["enum"] = keep
	}
	if schema != nil {
		b, err := json.Marshal(schema)
		if err != nil {
			return t, false
		}
		t.Parameters = b
	}
	return t, true
}

// scrubDescription rewrites a bound parameter's description so that it
// names only the values the caller kept: a description that lists every
// configured space ("one of documents, private.") would otherwise tell an
// agent which spaces exist that it cannot reach. The list as the registry
// wrote it (", "-joined, the enum's order) is replaced by the kept values;
// a sentence that still names a dropped value is left out, and the kept
// values are then stated once at the end.
func scrubDescription(desc string, enum, keep []any) string {
	all, kept := strs(enum), strs(keep)
	var dropped []string
	for _, v := range all {
		if !slices.Contains(kept, v) {
			dropped = append(dropped, v)
		}
	}
	names := func(s string) bool {
		for _, d := range dropped {
			if containsWord(s, d) {
				return true
			}
		}
		return false
	}
	if !names(desc) {
		return desc
	}
	desc = strings.ReplaceAll(desc, strings.Join(all, ", "), strings.Join(kept, ", "))
	if !names(desc) {
		return desc
	}
	var out []string
	for _, sentence := range strings.SplitAfter(desc, ". ") {
		if !names(sentence) {
			out = append(out, strings.TrimSpace(sentence))
		}
	}
	out = append(out, "One of: "+strings.Join(kept, ", ")+".")
	return strings.Join(out, " ")
}

func strs(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// containsWord reports whether w occurs in s between non-word characters
// (letters, digits, '-' and '_' make a word), so "doc" is not found in
// "documents".
func containsWord(s, w string) bool {
	if w == "" {
		return false
	}
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' }
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before, _ := utf8.DecodeLastRuneInString(s[:start])
		after, _ := utf8.DecodeRuneInString(s[end:])
		if (start == 0 || !isWord(before)) && (end == len(s) || !isWord(after)) {
			return true
		}
		i = start + 1
	}
}

// holdsAny reports whether the caller holds some capability of kind; with
// no way to enumerate a policy, it probes the wildcard, which covers all.
func holdsAny(pol pipeline.AccessPolicy, caller, kind string) bool {
	return pol.Holds(caller, pipeline.Capability{Kind: kind, Arg: "*"}) || pol.Holds(caller, pipeline.Capability{Kind: kind, Arg: ""})
}

// Tool implements chains.Catalog with the same rules, answering with the
// pipeline's own error kinds so a chain's validation error maps to the
// status and exit code a call would get.
func (c *RegistryCatalog) Tool(caller, name string) (pipeline.Tool, error) {
	for _, e := range c.Callable(caller) {
		if e.Tool.Name == name {
			return e.Tool, nil
		}
	}
	provs := c.Registry.Providers(name)
	if len(provs) == 0 {
		return pipeline.Tool{}, &pipeline.ToolNotFound{Tool: name}
	}
	return pipeline.Tool{}, &pipeline.ToolCapabilityDenied{Required: provs[0].Tool.CapabilityRequired}
}

// Docs turns entries into index documents.
func Docs(entries []Entry) []embeddings.Doc {
	docs := make([]embeddings.Doc, 0, len(entries))
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Tool.Name] {
			continue
		}
		seen[e.Tool.Name] = true
		caps := make([]string, 0, len(e.Tool.CapabilityRequired))
		for _, c := range e.Tool.CapabilityRequired {
			caps = append(caps, c.String())
		}
		docs = append(docs, embeddings.Doc{
			ID:           e.Tool.Name,
			Name:         e.Tool.Name,
			Description:  e.Tool.Description,
			Params:       embeddings.ParamsFromSchema(e.Tool.Parameters),
			Trust:        int(e.Tool.Trust),
			Capabilities: caps,
		})
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].ID < docs[j].ID })
	return docs
}

// IndexRetriever is the Retriever over the embeddings index (hybrid dense +
// BM25). The allowed names become the search's ID filter, applied before
// ranking.
type IndexRetriever struct {
	Index *embeddings.Index
}

func (r *IndexRetriever) Retrieve(ctx context.Context, query string, k int, allowed []string) ([]Retrieved, error) {
	hits, err := r.Index.Search(ctx, query, k, embeddings.Filter{IDs: allowed})
	if err != nil {
		return nil, err
	}
	out := make([]Retrieved, 0, len(hits))
	for _, h := range hits {
		out = append(out, Retrieved{Name: h.ID, Semantic: h.Fused, Dense: h.Dense})
	}
	return out, nil
}

// Generation changes whenever the registry's tool set does: what Callable
// answers can be cached until it moves (capabilities come from
// configuration, fixed for a process's life; a sunset passes with time, so
// a cache also bounds its age).
func (c *RegistryCatalog) Generation() uint64 { return c.Registry.Generation() }

// Withholder is what a Catalog may also say: the tools registered that a
// caller may not call, and the capabilities one call of such a tool needs
// that the caller lacks. No-LLM planning asks it when no tool the caller
// holds serves a request, to name the tool that would and what to grant.
type Withholder interface {
	Withheld(caller string) []Entry
	Lacks(caller string, t pipeline.Tool, args map[string]any) []pipeline.Capability
}

// Withheld lists the tools whose provider the caller reaches but which
// require a capability it does not hold (as registered, not narrowed).
func (c *RegistryCatalog) Withheld(caller string) []Entry {
	pol := c.Policy
	if pol == nil {
		return nil
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	var out []Entry
	for _, r := range c.Registry.List() {
		if d := r.Tool.Deprecation; d != nil && !d.Sunset.IsZero() && now.After(d.Sunset) || !pol.CanReach(caller, r.Provider) {
			continue
		}
		if _, ok := narrow(r.Tool, caller, pol); !ok {
			out = append(out, Entry{Provider: r.Provider, Tool: r.Tool})
		}
	}
	return out
}

// Lacks is the capabilities the call of t with args requires that the
// caller does not hold, a capability bound to a parameter taken with the
// argument's value ("WriteSpace($space)" with space "documents" is
// WriteSpace(documents)).
func (c *RegistryCatalog) Lacks(caller string, t pipeline.Tool, args map[string]any) []pipeline.Capability {
	pol := c.Policy
	if pol == nil {
		return nil
	}
	var out []pipeline.Capability
	for _, req := range t.CapabilityRequired {
		if param, bound := req.ParamRef(); bound {
			s, ok := args[param].(string)
			if !ok {
				continue
			}
			req = pipeline.Capability{Kind: req.Kind, Arg: s}
		}
		if !pol.Holds(caller, req) {
			out = append(out, req)
		}
	}
	return out
}

// Held is the capabilities the caller holds, when the policy can list them
// (a StaticPolicy, as airs.yaml's agents make): what a grant adds to.
func (c *RegistryCatalog) Held(caller string) []pipeline.Capability {
	if sp, ok := c.Policy.(*pipeline.StaticPolicy); ok {
		return slices.Clone(sp.Capabilities[caller])
	}
	return nil
}
