package complete

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/server/compat"
	"github.com/airs-dev/airs/understand"
)

// Parallel calls: a request that asks for several things ("the weather in
// Paris and in Rome", "read a.txt and b.txt") gets one call per thing when
// the request allows several (parallel_tool_calls not false; Ollama
// always). The request is cut into parts (selector.SplitParts, then at
// "and" and commas), and each part gives at most one call:
//
//   - its own tool, when the part names what that tool is about
//     (understand.AsksFor: "the time in Tokyo" after "the weather in Paris");
//   - otherwise the previous part's tool, with the arguments this part's
//     own words give ("in Rome" after "the weather in Paris").
//
// A part's call must validate against its tool's schema and take at least
// one value from the part's words (not only the defaults an empty request
// gives); a call equal to an earlier one is dropped. Without a model, the
// request as a whole must select a call (the parts only split what is
// callable: a request no tool fits stays without a call), and that call
// must not take its values from several parts (then the parts are one
// call's arguments: "a=5, b=20 and c=-25"). Fewer than two calls:
// the request is one call, made as usual. With parallel_tool_calls false,
// a request of several things gets the first thing's call (without a
// model) or the model's one call. Without a model the parts are
// served by the no-LLM selection; with a model, each part's call is
// generated under the tool-call grammar over that part's candidates (the
// grammar holds one call, so several calls are several generations).

// reAndSplit cuts a part further at "and" and commas (", and also", ", then").
var reAndSplit = regexp.MustCompile(`(?i)\s*,?\s+and\s+(?:also\s+)?|\s*,\s+(?:also\s+)?`)

// reThousands is a thousands separator between digits.
var reThousands = regexp.MustCompile(`(\d),(\d{3})`)

// requestParts cuts a request into the parts that may each be one call.
func requestParts(text string) []string {
	var out []string
	for _, p := range selector.SplitParts(text) {
		for _, q := range reAndSplit.Split(p, -1) {
			if q = strings.TrimSpace(q); q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

// partSelector selects among cat for one part of the request.
type partSelector func(ctx context.Context, part string) (*selector.Selection, error)

// parallelNoLLM makes one call per part without a model; nil when the
// request gives fewer than two.
func (b *Backend) parallelNoLLM(ctx context.Context, cat catalog, parts []string, sel partSelector) ([]compat.Call, error) {
	var out []compat.Call
	prev := ""
	for i, part := range parts {
		s, err := sel(ctx, part)
		if err != nil {
			return nil, err
		}
		var call *compat.Call
		if own := s.Function; own != "" && own != grammar.NoneTool && s.Validation == "ok" && (i == 0 || prev == "" || b.asksFor(cat, own, part)) {
			if c := (compat.Call{Name: own, Arguments: compactRaw(s.Arguments)}); b.evidenced(cat, c, part) {
				call = &c
			}
		}
		if call == nil && prev != "" {
			call = b.inherit(cat, prev, part)
		}
		if call == nil {
			continue
		}
		prev = call.Name
		if !containsCall(out, *call) {
			out = append(out, *call)
		}
	}
	if len(out) < 2 {
		return nil, nil
	}
	return out, nil
}

// spansParts reports whether a call's argument values come from two or
// more of the parts: then the parts are one call's arguments ("a=5, b=20
// and c=-25"), not several things asked.
func spansParts(args json.RawMessage, parts []string) bool {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return false
	}
	lower := make([]string, len(parts))
	for i, p := range parts {
		// "$2,000,000" is the value 2000000.
		lower[i] = strings.ToLower(reThousands.ReplaceAllString(p, "$1$2"))
		lower[i] = reThousands.ReplaceAllString(lower[i], "$1$2")
	}
	from := map[int]bool{}
	var walk func(v any)
	walk = func(v any) {
		var text string
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
			return
		case []any:
			for _, e := range x {
				walk(e)
			}
			return
		case string:
			text = strings.ToLower(x)
		case float64:
			b, _ := json.Marshal(x)
			text = string(b)
		default:
			return
		}
		if text == "" {
			return
		}
		in := -1
		for i, p := range lower {
			if strings.Contains(p, text) {
				if in >= 0 {
					return // in several parts: says nothing
				}
				in = i
			}
		}
		if in >= 0 {
			from[in] = true
		}
	}
	walk(v)
	return len(from) >= 2
}

// parallelModel makes one call per part with the model, each under the
// tool-call grammar over the part's candidates (the previous part's tool
// first, so that "in Rome" may continue "the weather in Paris"); nil when
// the request gives fewer than two calls.
func (b *Backend) parallelModel(ctx context.Context, req *compat.Request, cat catalog, parts []string, sel partSelector) ([]compat.Call, error) {
	var out []compat.Call
	prev := ""
	whole := req.LastUser()
	for _, part := range parts {
		s, err := sel(ctx, part)
		if err != nil {
			return nil, err
		}
		cands := s.Candidates
		if prev != "" {
			cands = append([]selector.Candidate{{Name: prev}}, cands...)
		}
		sub := *req
		sub.Messages = withLastUser(req.Messages, whole+"\n\nMake the one call for this part of the request only: "+part)
		calls, _, err := b.generateCall(ctx, &sub, cat, dedupCandidates(cands), false)
		if err != nil {
			return nil, err
		}
		if len(calls) == 0 {
			continue
		}
		prev = calls[0].Name
		if !containsCall(out, calls[0]) {
			out = append(out, calls[0])
		}
	}
	if len(out) < 2 {
		return nil, nil
	}
	return out, nil
}

// withLastUser is msgs with the last user message's content replaced.
func withLastUser(msgs []compat.Message, content string) []compat.Message {
	out := append([]compat.Message(nil), msgs...)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == "user" {
			out[i].Content = content
			break
		}
	}
	return out
}

func dedupCandidates(cands []selector.Candidate) []selector.Candidate {
	seen := map[string]bool{}
	var out []selector.Candidate
	for _, c := range cands {
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	return out
}

// asksFor reports whether part names what the tool is about.
func (b *Backend) asksFor(cat catalog, name, part string) bool {
	e := cat.only(name)
	return e != nil && understand.AsksFor(part, name, e[0].Tool.Parameters)
}

// inherit is the call of the tool name with the arguments part's words
// give (nil when they do not make a valid, evidenced call).
func (b *Backend) inherit(cat catalog, name, part string) *compat.Call {
	e := cat.only(name)
	if e == nil {
		return nil
	}
	args, err := selector.ExtractArguments(e[0].Tool.Parameters, part, selector.Hints{})
	if err != nil {
		return nil
	}
	raw, err := json.Marshal(args)
	if err != nil || b.validate(e[0].Tool, raw) != nil {
		return nil
	}
	c := compat.Call{Name: name, Arguments: compactRaw(raw)}
	if !b.evidenced(cat, c, part) {
		return nil
	}
	return &c
}

// evidenced reports whether part's own words fill the call's required
// arguments and give it at least one value that an empty request would
// not (the extractor's type-zero fill-ins are no evidence).
func (b *Backend) evidenced(cat catalog, c compat.Call, part string) bool {
	e := cat.only(c.Name)
	if e == nil {
		return false
	}
	params := e[0].Tool.Parameters
	if understand.Unfilled(part, params) != "" {
		return false
	}
	empty, err := selector.ExtractArguments(params, "", selector.Hints{})
	if err != nil {
		return true // an empty request cannot fill it: the values are the part's
	}
	var got, none map[string]any
	eb, _ := json.Marshal(empty)
	if json.Unmarshal(eb, &none) != nil || json.Unmarshal(c.Arguments, &got) != nil {
		return false
	}
	return !reflect.DeepEqual(none, got)
}

func containsCall(calls []compat.Call, c compat.Call) bool {
	for _, o := range calls {
		if o.Name == c.Name && string(compactRaw(o.Arguments)) == string(compactRaw(c.Arguments)) {
			return true
		}
	}
	return false
}
