package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/internal/engine"
)

// prompt serves /prompt: without a name it lists the prompts the caller
// may use; with one it gets the prompt and takes its text as the turn.
func (r *REPL) prompt(ctx context.Context, arg string) {
	ps, err := r.e.MCPPrompts(ctx, r.opts.Caller)
	if err != nil {
		r.printf("note: %v\n", err)
	}
	if arg == "" {
		if len(ps) == 0 {
			r.printf("no MCP server you may use offers prompts\n")
			return
		}
		for _, p := range ps {
			r.printf("  %s.%s%s  %s\n", p.Server, p.Name, argList(p), p.Description)
		}
		return
	}
	name, rest, _ := strings.Cut(arg, " ")
	p, ok := findPrompt(ps, name)
	if !ok {
		r.printf("no prompt %s: /prompt lists them (SERVER.NAME)\n", name)
		return
	}
	args, err := promptArgs(p, strings.TrimSpace(rest))
	if err != nil {
		r.printf("%v\n", err)
		return
	}
	text, err := r.e.MCPPrompt(ctx, r.opts.Caller, p.Server, p.Name, args)
	if err != nil {
		r.printf("%v\n", err)
		return
	}
	r.printf("%s\n", text)
	r.turn(ctx, text)
}

func argList(p engine.ServerPrompt) string {
	var b strings.Builder
	for _, a := range p.Arguments {
		if a.Required {
			fmt.Fprintf(&b, " %s=…", a.Name)
		} else {
			fmt.Fprintf(&b, " [%s=…]", a.Name)
		}
	}
	return b.String()
}

// findPrompt is SERVER.NAME, or a bare NAME that one server alone offers.
func findPrompt(ps []engine.ServerPrompt, name string) (engine.ServerPrompt, bool) {
	var bare []engine.ServerPrompt
	for _, p := range ps {
		if p.Server+"."+p.Name == name {
			return p, true
		}
		if p.Name == name {
			bare = append(bare, p)
		}
	}
	if len(bare) == 1 {
		return bare[0], true
	}
	return engine.ServerPrompt{}, false
}

// promptArgs parses k=v pairs (a value may be "double quoted" to hold
// spaces); text without "=" is the value of a prompt's only argument.
func promptArgs(p engine.ServerPrompt, s string) (map[string]string, error) {
	out := map[string]string{}
	if s == "" {
		return out, nil
	}
	if !strings.Contains(s, "=") {
		if len(p.Arguments) != 1 {
			return nil, fmt.Errorf("prompt %s.%s takes%s: write name=value", p.Server, p.Name, argList(p))
		}
		out[p.Arguments[0].Name] = strings.Trim(s, `"`)
		return out, nil
	}
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || strings.ContainsAny(k, " \"") || k == "" {
			return nil, fmt.Errorf("cannot read %q as name=value: quote values with spaces, name=\"a b\"", s)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			end := strings.Index(rest[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("the value of %s has no closing quote", k)
			}
			v, rest = rest[1:1+end], rest[2+end:]
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		out[k] = v
		s = strings.TrimSpace(rest)
	}
	return out, nil
}
