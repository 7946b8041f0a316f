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
}

var toolCache sync.Map // schema hash + options → *Grammar

// CompileCached is Compile with a process-wide cache keyed by the schema's
// SHA-256 and the options.
func CompileCached(schema []byte, opts Options) (*Grammar, error) {
	key := cacheKey(schema, opts)
	if g, ok := toolCache.Load(key); ok {
		return g.(*Grammar), nil
	}
	g, err := Compile(schema, opts)
	if err != nil {
		return nil, err
	}
	x, _ := toolCache.LoadOrStore(key, g)
	return x.(*Grammar), nil
}

func cacheKey(schema []byte, opts Options) string {
	h := sha256.Sum256(schema)
	return hex.EncodeToString(h[:]) + "|" + opts.key()
}

// ToolCall builds the grammar of {"function":"<name>","arguments":{...}}
// over tools (names must be distinct and not "none" when AllowNone). Each
// tool's compiled automaton is cached by (schema hash, options), so a new
// subset of seen tools costs little: the tools' rules are relocated (shared
// tables, renumbered calls and checks) under a new root rule.
func ToolCall(tools []ToolSchema, opts ToolCallOptions) (*Grammar, error) {
	o := opts.Options.withDefaults()
	if len(tools) == 0 && !opts.AllowNone {
		return nil, &CompileError{Msg: "no tools"}
	}
	seen := map[string]bool{}
	params := make([][]byte, len(tools))
	for i, t := range tools {
		if t.Name == "" || seen[t.Name] || opts.AllowNone && t.Name == NoneTool {
			return nil, &CompileError{Pointer: fmt.Sprintf("/tools/%d", i), Keyword: "name", Msg: fmt.Sprintf("tool name %q is empty or repeated", t.Name)}
		}
		seen[t.Name] = true
		params[i] = t.Parameters
		if len(params[i]) == 0 {
			params[i] = []byte(`{"type":"object"}`)
		}
	}
	subs, errs := compileAll(params, o)
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
	g := &Grammar{opts: o, ops: []opDef{{}}}
	// rules 0 (root, below) and 1..3 (shared any-value rules)
	var shared []*rule
	for _, s := range subs {
		shared = s.rules[1:4]
		break
	}
	if shared == nil {
		c := newCompiler(o)
		shared = newBuilder(c).rules[1:4]
	}
	g.rules = append([]*rule{nil}, shared...)
	roots := make([]int32, len(subs))
	for i, s := range subs {
		roots[i] = relocate(g, s)
	}
	b := &builder{opts: o}
	size := 64
	for _, t := range tools {
		size += len(t.Name) + 24 // the name, then ,"arguments": and the call
	}
	n := &bnfa{st: make([]bstate, 0, size)}
	s0 := n.add()
	F := n.add()
	n.st[F].final = true
	ws := func(x int32) int32 {
		y := n.add()
		b.ws(n, x, y)
		return y
	}
	lit := func(x int32, s string) int32 {
		y := n.add()
		n.lit(x, s, y)
		return y
	}
	x := ws(lit(s0, "{"))
	x = ws(lit(x, `"function"`))
	x = ws(lit(x, ":"))
	// The names share their prefixes in the NFA already (a trie from x), so
	// the subset construction sees singletons there instead of one path per
	// tool merged byte by byte.
	trie := map[[2]int32]int32{}
	name := func(s string) int32 {
		cur := x
		for i := 0; i < len(s); i++ {
			k := [2]int32{cur, int32(s[i])}
			nx, ok := trie[k]
			if !ok {
				nx = n.add()
				n.edge(cur, s[i], s[i], nx, 0)
				trie[k] = nx
			}
			cur = nx
		}
		return cur
	}
	end := n.add()
	for i, t := range tools {
		y := name(string(appendJSONString(nil, t.Name)))
		y = ws(lit(ws(y), ","))
		y = ws(lit(y, `"arguments"`))
		y = ws(lit(y, ":"))
		n.st[y].calls = append(n.st[y].calls, bcall{roots[i], end})
	}
	if opts.AllowNone {
		y := name(`"none"`)
		y = ws(lit(ws(y), ","))
		y = ws(lit(y, `"arguments"`))
		y = ws(lit(y, ":"))
		y = ws(lit(y, "{"))
		n.eps(lit(y, "}"), end)
	}
	n.lit(ws(end), "}", F)
	ds, err := determinizeBytes(n, 0)
	if err != nil {
		return nil, &CompileError{Msg: err.Error()}
	}
	// Not minimized: each name leads to its own call, so the name trie is
	// already (nearly) minimal, and Moore's refinement would take one round
	// per byte of the longest name.
	r := newRule(ds)
	r.name, r.kind = "tool-call", kindValue
	g.rules[0] = r
	for _, s := range subs {
		g.Loosened = append(g.Loosened, s.Loosened...)
	}
	return g, nil
}

// compileAll compiles the schemas through the cache; the ones not cached
// yet are compiled in parallel (up to GOMAXPROCS at once), since a
// request's first grammar over new tools waits for all of them.
func compileAll(schemas [][]byte, o Options) ([]*Grammar, []error) {
	subs := make([]*Grammar, len(schemas))
	errs := make([]error, len(schemas))
	keys := make([]string, len(schemas))
	var miss []int
	for i, s := range schemas {
		keys[i] = cacheKey(s, o)
		if g, ok := toolCache.Load(keys[i]); ok {
			subs[i] = g.(*Grammar)
		} else {
			miss = append(miss, i)
		}
	}
	compile := func(i int) {
		g, err := Compile(schemas[i], o)
		if err != nil {
			errs[i] = err
			return
		}
		x, _ := toolCache.LoadOrStore(keys[i], g)
		subs[i] = x.(*Grammar)
	}
	workers := min(runtime.GOMAXPROCS(0), len(miss))
	if workers <= 1 {
		for _, i := range miss {
			compile(i)
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
				compile(miss[k])
			}
		})
	}
	wg.Wait()
	return subs, errs
}

// relocate appends s's own rules (0 and 4...) to g, renumbering calls and
// ops, and returns the new index of s's root rule.
func relocate(g *Grammar, s *Grammar) int32 {
	base := int32(len(g.rules))
	mapRule := func(id int32) int32 {
		switch {
		case id == 0:
			return base
		case id <= anyValRule:
			return id
		default:
			return base + id - anyValRule
		}
	}
	opBase := int32(len(g.ops)) - 1
	g.ops = append(g.ops, s.ops[1:]...)
	for i, r := range s.rules {
		if i >= 1 && i <= anyValRule {
			continue
		}
		nr := *r
		nr.id = mapRule(int32(i))
		nr.calls = make([][]callEdge, len(r.calls))
		for st, cs := range r.calls {
			if len(cs) == 0 {
				continue
			}
			nc := make([]callEdge, len(cs))
			for k, c := range cs {
				nc[k] = callEdge{mapRule(c.rule), c.ret}
			}
			nr.calls[st] = nc
		}
		nr.spec = make([][]spEdge, len(r.spec))
		for st, es := range r.spec {
			if len(es) == 0 {
				continue
			}
			ne := make([]spEdge, len(es))
			for k, e := range es {
				e.op += opBase
				ne[k] = e
			}
			nr.spec[st] = ne
		}
		g.rules = append(g.rules, &nr)
	}
	return base
}
