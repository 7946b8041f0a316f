package grammar

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// NoneTool is the function name of the "no tool fits" choice:
// {"function":"none","arguments":{}}.
const NoneTool = "none"

// ToolSchema is one tool: its name and the JSON Schema of its arguments
// (nil or empty means any object).
type ToolSchema struct {
	Name       string
	Parameters []byte
}

// ToolCallOptions control ToolCall.
type ToolCallOptions struct {
	// AllowNone adds the choice {"function":"none","arguments":{}}.
	AllowNone bool
	// Options compile each tool's parameters schema.
	Options Options
	// Eager builds every tool's automata before ToolCall returns. By
	// default a tool's automata are built when a matcher first completes
	// its name (once per process: they are cached), so a request waits
	// only for the tools the model picks; every compile error a schema's
	// keywords can cause is still reported by ToolCall, and only a size
	// budget (an automaton too large) can fail later (see Grammar.Build).
	Eager bool
}

var toolCache sync.Map // schema hash + options → *Grammar (lowered; built on first use)

// CompileCached is Compile with a process-wide cache keyed by the schema's
// SHA-256 and the options.
func CompileCached(schema []byte, opts Options) (*Grammar, error) {
	o := opts.withDefaults()
	g, err := cachedLower(schema, o, cacheKey(schema, o))
	if err != nil {
		return nil, err
	}
	if err := g.build(); err != nil {
		return nil, err
	}
	return g, nil
}

func cachedLower(schema []byte, o Options, key string) (*Grammar, error) {
	if g, ok := toolCache.Load(key); ok {
		return g.(*Grammar), nil
	}
	g, err := lower(schema, o)
	if err != nil {
		return nil, err
	}
	x, _ := toolCache.LoadOrStore(key, g)
	return x.(*Grammar), nil
}

func cacheKey(schema []byte, opts Options) string { return schemaKey(schema, opts.key()) }

func schemaKey(schema []byte, optsKey string) string {
	h := sha256.Sum256(schema)
	return hex.EncodeToString(h[:]) + "|" + optsKey
}

// ToolCall builds the grammar of {"function":"<name>","arguments":{...}}
// over tools (names must be distinct and not "none" when AllowNone). Each
// tool's grammar is cached by (schema hash, options) and kept as its own
// segment (no renumbering), so a new subset of seen tools costs only the
// root rule over their names.
func ToolCall(tools []ToolSchema, opts ToolCallOptions) (*Grammar, error) {
	o := opts.Options.withDefaults()
	if len(tools) == 0 && !opts.AllowNone {
		return nil, &CompileError{Msg: "no tools"}
	}
	if len(tools) > maxTools {
		return nil, &CompileError{Msg: fmt.Sprintf("%d tools: at most %d in one tool-call grammar", len(tools), maxTools)}
	}
	seen := map[string]bool{}
	params := make([][]byte, len(tools))
	names := make([]string, len(tools))
	for i, t := range tools {
		if t.Name == "" || seen[t.Name] || opts.AllowNone && t.Name == NoneTool {
			return nil, &CompileError{Pointer: fmt.Sprintf("/tools/%d", i), Keyword: "name", Msg: fmt.Sprintf("tool name %q is empty or repeated", t.Name)}
		}
		seen[t.Name] = true
		names[i] = t.Name
		params[i] = t.Parameters
		if len(params[i]) == 0 {
			params[i] = []byte(`{"type":"object"}`)
		}
	}
	subs, errs := lowerTools(params, o, opts.Eager)
	for i, err := range errs {
		if err == nil {
			continue
		}
		if ce, ok := err.(*CompileError); ok {
			ce2 := *ce
			ce2.Msg = fmt.Sprintf("tool %q: %s", tools[i].Name, ce.Msg)
			return nil, &ce2
		}
		return nil, fmt.Errorf("grammar: tool %q: %w", tools[i].Name, err)
	}
	g := &Grammar{opts: o, ops: []opDef{{}}, subs: subs, subNames: names}
	r := newRule(toolCallRoot(names, opts.AllowNone, o))
	r.name, r.kind = "tool-call", kindValue
	g.rules = []*rule{r}
	g.built.Store(true)
	for _, s := range subs {
		g.Loosened = append(g.Loosened, s.Loosened...)
	}
	if opts.Eager {
		if err := g.Build(); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// lowerTools lowers the schemas through the cache (and with eager, builds
// them); the ones not cached (or not built) yet are done in parallel (up
// to GOMAXPROCS at once), since a request's first grammar over new tools
// waits for all of them.
func lowerTools(schemas [][]byte, o Options, eager bool) ([]*Grammar, []error) {
	subs := make([]*Grammar, len(schemas))
	errs := make([]error, len(schemas))
	keys := make([]string, len(schemas))
	ok := o.key()
	var miss []int
	for i, s := range schemas {
		keys[i] = schemaKey(s, ok)
		if g, ok := toolCache.Load(keys[i]); ok && (!eager || g.(*Grammar).built.Load()) {
			subs[i] = g.(*Grammar)
		} else {
			miss = append(miss, i)
		}
	}
	do := func(i int) {
		subs[i], errs[i] = cachedLower(schemas[i], o, keys[i])
		if errs[i] == nil && eager {
			errs[i] = subs[i].build()
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(miss))
	if workers <= 1 {
		for _, i := range miss {
			do(i)
		}
		return subs, errs
	}
	var next atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1)) - 1
				if k >= len(miss) {
					return
				}
				do(miss[k])
			}
		})
	}
	wg.Wait()
	return subs, errs
}
