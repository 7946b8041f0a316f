package grammar

import (
	"slices"
	"sort"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// toolCallRoot builds the DFA of a tool-call grammar's root rule directly:
//
//	{ "function" : NAME , "arguments" : CALL }
//
// with a whitespace gap after every token but the last, NAME one of the
// JSON-encoded names, and CALL tool k's arguments (local rule 0 of segment
// k+1), or {} for "none". The language is deterministic by construction (a
// trie of the names; a gap's whitespace bytes never start the token after
// it), so no subset construction is needed: that was most of a cached
// tool-call build. names[i] is the tool of segment i+1; allowNone adds the
// "none" choice.
func toolCallRoot(names []string, allowNone bool, o Options) []dstate {
	noneAt := -1
	if allowNone {
		noneAt = len(names)
		names = append(names[:len(names):len(names)], NoneTool)
	}
	ds := make([]dstate, 0, 64+len(names)*40)
	add := func() int32 {
		ds = append(ds, dstate{lim: -1, si: -1})
		return int32(len(ds) - 1)
	}
	edge := func(s int32, b byte, t int32) {
		ds[s].plain = append(ds[s].plain, bedge{lo: b, hi: b, to: t})
	}
	var gaps []int32 // states after which whitespace may come
	lit := func(s int32, text string) int32 {
		for i := 0; i < len(text); i++ {
			t := add()
			edge(s, text[i], t)
			s = t
		}
		gaps = append(gaps, s)
		return s
	}
	s0 := add()
	root := lit(lit(lit(s0, "{"), `"function"`), ":")
	end := add()
	gaps = append(gaps, end)
	F := add()
	ds[F].final = true
	edge(end, '}', F)

	// the trie, from the names in byte order: a name branches off the
	// previous one where they first differ (JSON-encoded names are quoted,
	// so none is a prefix of another)
	enc := make([]string, len(names))
	order := make([]int, len(names))
	for i, nm := range names {
		enc[i] = string(jsonvalue.AppendString(nil, nm))
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return enc[order[a]] < enc[order[b]] })
	path := []int32{root} // path[j]: the state after j bytes of the previous name
	prev := ""
	for _, i := range order {
		e := enc[i]
		common := 0
		for common < len(prev) && common < len(e) && prev[common] == e[common] {
			common++
		}
		path = path[:common+1]
		s := path[common]
		for j := common; j < len(e); j++ {
			t := add()
			edge(s, e[j], t)
			s = t
			path = append(path, s)
		}
		prev = e
		gaps = append(gaps, s)
		args := lit(lit(lit(s, ","), `"arguments"`), ":")
		if i == noneAt {
			open := lit(args, "{")
			edge(open, '}', end)
			continue
		}
		ds[args].calls = []callEdge{{rule: int32(i+1) << segShift, ret: end}}
	}
	if o.Whitespace == WhitespaceFlexible && o.MaxWhitespace > 0 {
		expandGaps(&ds, gaps, o.MaxWhitespace)
	}
	return ds
}

// expandGaps gives every gap state a chain of up to max whitespace bytes,
// each link with the gap's own way out.
func expandGaps(dsp *[]dstate, gaps []int32, max int) {
	ds := *dsp
	ws := []byte{'\t', '\n', '\r', ' '}
	for _, g := range gaps {
		out, calls, final := ds[g].plain, ds[g].calls, ds[g].final
		cur := g
		for i := 0; i < max; i++ {
			ds = append(ds, dstate{lim: -1, si: -1, plain: slices.Clone(out), calls: calls, final: final})
			nx := int32(len(ds) - 1)
			for _, b := range ws {
				ds[cur].plain = append(ds[cur].plain, bedge{lo: b, hi: b, to: nx})
			}
			cur = nx
		}
	}
	for i := range ds {
		p := ds[i].plain
		slices.SortFunc(p, func(a, b bedge) int { return int(a.lo) - int(b.lo) })
	}
	*dsp = ds
}
