package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

var toolsCmd = &command{
	Name:    "tools",
	Summary: "list the registered tools, or show one with its schemas",
	Usage: `Usage:
  airs tools list [--json] [--provider P] [--all]
  airs tools show NAME [--provider P] [--version V] [--json] [--all]
  airs tools review SERVER [--json] [--accept [TOOL…]]
  airs tools install npm:PACKAGE@VERSION [--name N] [--requires CAPS] [--yes] [--npm PATH] [-- ARGS]
  airs tools remove NAME

'list' prints the tools you may call: the builtins (provider "builtin") and
those declared in the manifests named in airs.yaml, as the model sees them —
a parameter bound to a capability (the space of ReadSpace($space)) lists only
the values you hold. --all prints every registered tool as registered,
whether you may call it or not. 'show' prints one tool's
description, parameters (JSON Schema 2020-12), return schema, required
capabilities, trust level, latency class, whether it is idempotent and its
effect (read-only, destructive, or writes) —
everything you need to write its --args for 'airs call'.

'review' starts the MCP server SERVER (of airs.yaml's mcp.servers, or
installed) and shows its tools with their effects and whole descriptions,
the tools it lists that AIRS does not offer and why, and what granting
means: the capabilities an agent must hold (MCP(SERVER) and the server's
requires), and whether you hold them. A server's annotations
(readOnlyHint, destructiveHint, idempotentHint; absent hints take the MCP
spec's defaults, so an unannotated tool is destructive) are its claims:
AIRS pins each tool's effect and description as the server is first
listed (the grant) and holds a tool the server later lists otherwise —
other hints, another description, a tool that is new — so each of its
calls waits for a person, until you accept it: --accept pins every tool
(or the TOOLs named) as the server lists it now. airs.yaml's
mcp.servers.SERVER.tools.TOOL.effect (read, write, destructive) states a
tool's effect outright.

'install' installs an MCP server from npm into AIRS_HOME/mcp without
running any of its code: npm resolves the exact version's whole dependency
tree into a lock file, every package pinned by its integrity hash (a tree
with one that is not is refused; a later install of the same version
starts from the lock kept then), and 'npm ci --ignore-scripts' installs
exactly that, npm running with a minimal environment. The lock's hash and
a hash of every installed file and folder, modes included, are recorded
and checked each time AIRS starts the server. You see the package, its
tree and what it would run; only if you say yes is it started (with the
minimal environment every stdio server gets) to list its tools, shown
with their whole descriptions; only if you say yes again (--yes: both)
are they offered from then on, as NAME.tool (NAME: --name, default the
package name without "server-"), pinned as you saw them. --requires adds
capabilities its tools require beside MCP(NAME); ARGS after -- are passed
to the server. 'remove' deletes an installed server and its pins.

Examples:
  airs tools list
  airs tools list --json | jq -r '.[].name'
  airs tools show calculator
  airs tools show list-files --json
  airs tools review fs
  airs tools review fs --accept write_file
  airs tools install npm:@modelcontextprotocol/server-everything@2026.8.31
  airs tools install npm:@modelcontextprotocol/server-filesystem@2026.8.31 --name docs --requires 'ReadSpace(documents)' -- ~/Documents
  airs tools remove everything
`,
	Run: runTools,
}

func runTools(a *app, args []string) error {
	fs := a.flags()
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	provider := fs.String("provider", "", "only tools of this `provider`")
	version := fs.String("version", "", "show this `version` (default: the highest)")
	all := fs.Bool("all", false, "every registered tool as registered, not only what you may call")
	var io installOpts
	fs.StringVar(&io.name, "name", "", "install: the server's `name` (default: from the package)")
	fs.StringVar(&io.requires, "requires", "", "install: `capabilities` its tools require beside MCP(NAME), comma-separated")
	fs.BoolVar(&io.yes, "yes", false, "install: start it and offer its tools without asking")
	fs.StringVar(&io.npm, "npm", "", "install: the npm `client` to use (default: npm on $PATH)")
	accept := fs.Bool("accept", false, "review: pin the server's tools (or the TOOLs named) as it lists them now")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("say 'list', 'show NAME' or 'review SERVER'")
	}
	switch pos[0] {
	case "install":
		if len(pos) < 2 {
			return usagef("'tools install' takes npm:PACKAGE@VERSION")
		}
		io.asJSON, io.args = *asJSON, pos[2:]
		return toolsInstall(a, pos[1], io)
	case "remove", "rm":
		if len(pos) != 2 {
			return usagef("'tools remove' takes the NAME of an installed server")
		}
		return toolsRemove(a, pos[1])
	}
	if pos[0] == "review" {
		if len(pos) < 2 {
			return usagef("'tools review' takes one MCP SERVER name (mcp.servers in airs.yaml)")
		}
		return toolsReview(a, pos[1], reviewOpts{asJSON: *asJSON, accept: *accept, tools: pos[2:]})
	}
	reg, err := a.registry()
	if err != nil {
		return err
	}
	var mine func(pipeline.Registered) (pipeline.Tool, bool)
	if !*all {
		if mine, err = callableBy(a, reg); err != nil {
			return err
		}
	}
	switch pos[0] {
	case "list", "ls":
		if len(pos) > 1 {
			return usagef("'tools list' takes no arguments, got %q", pos[1:])
		}
		return toolsList(a, reg, mine, *provider, *asJSON)
	case "show":
		if len(pos) != 2 {
			return usagef("'tools show' takes one tool NAME")
		}
		return toolsShow(a, reg, mine, pos[1], *provider, *version, *asJSON)
	default:
		return usagef("unknown 'tools' action %q: say 'list', 'show NAME' or 'review SERVER'", pos[0])
	}
}

// toolJSON is the JSON form of a registered tool.
type toolJSON struct {
	Provider string `json:"provider"`
	pipeline.Tool
}

// callableBy returns how the CLI's caller sees a registered tool: narrowed
// as the selector narrows it for the model, and false when the caller may
// not call it at all (the same rules the pipeline enforces).
func callableBy(a *app, reg *pipeline.Registry) (func(pipeline.Registered) (pipeline.Tool, bool), error) {
	caller, err := a.caller()
	if err != nil {
		return nil, err
	}
	cat := &selector.RegistryCatalog{Registry: reg, Policy: a.policy}
	seen := map[[3]string]pipeline.Tool{}
	for _, e := range cat.Callable(caller) {
		seen[[3]string{e.Provider, e.Tool.Name, e.Tool.Version}] = e.Tool
	}
	return func(r pipeline.Registered) (pipeline.Tool, bool) {
		t, ok := seen[[3]string{r.Provider, r.Tool.Name, r.Tool.Version}]
		return t, ok
	}, nil
}

func toolsList(a *app, reg *pipeline.Registry, mine func(pipeline.Registered) (pipeline.Tool, bool), provider string, asJSON bool) error {
	var list []pipeline.Registered
	seen := map[[2]string]bool{}
	hidden := 0
	for _, r := range reg.List() { // sorted; highest version first
		k := [2]string{r.Provider, r.Tool.Name}
		if seen[k] || provider != "" && r.Provider != provider {
			continue
		}
		seen[k] = true
		if mine != nil {
			t, ok := mine(r)
			if !ok {
				hidden++
				continue
			}
			r.Tool = t
		}
		list = append(list, r)
	}
	if hidden > 0 && !asJSON {
		defer fmt.Fprintf(a.stderr, "%d registered tool(s) not shown: you may not call them (--all lists every tool)\n", hidden)
	}
	if asJSON {
		out := make([]toolJSON, len(list))
		for i, r := range list {
			out[i] = toolJSON{r.Provider, r.Tool}
		}
		return writeJSON(a.stdout, out)
	}
	if len(list) == 0 {
		fmt.Fprintln(a.stderr, "no tools registered")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPROVIDER\tTRUST\tLATENCY\tIDEMPOTENT\tEFFECT\tDESCRIPTION")
	for _, r := range list {
		t := r.Tool
		desc := firstSentence(t.Description, 60)
		if t.Deprecation != nil {
			desc = "[deprecated] " + desc
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Version, r.Provider, t.Trust, t.LatencyClass, yesNo(t.Idempotent), effect(t), desc)
	}
	return tw.Flush()
}

func toolsShow(a *app, reg *pipeline.Registry, mine func(pipeline.Registered) (pipeline.Tool, bool), name, provider, version string, asJSON bool) error {
	var r pipeline.Registered
	if provider != "" {
		var ok bool
		if r, ok = reg.Get(provider, name, version); !ok {
			return &pipeline.ToolNotFound{Tool: name, Provider: provider, Version: version}
		}
	} else {
		provs := reg.Providers(name)
		if len(provs) == 0 {
			return &pipeline.ToolNotFound{Tool: name, Version: version}
		}
		r = provs[0] // the provider a call would use
		if version != "" {
			var ok bool
			if r, ok = reg.Get(r.Provider, name, version); !ok {
				return &pipeline.ToolNotFound{Tool: name, Provider: provs[0].Provider, Version: version}
			}
		}
		if len(provs) > 1 && !asJSON {
			var others []string
			for _, p := range provs[1:] {
				others = append(others, p.Provider)
			}
			fmt.Fprintf(a.stderr, "note: also offered by %s (use --provider)\n", strings.Join(others, ", "))
		}
	}
	if mine != nil {
		t, ok := mine(r)
		if !ok {
			return &pipeline.ToolCapabilityDenied{Required: r.Tool.CapabilityRequired}
		}
		r.Tool = t
	}
	if asJSON {
		return writeJSON(a.stdout, toolJSON{r.Provider, r.Tool})
	}
	t := r.Tool
	w := a.stdout
	fmt.Fprintf(w, "%s %s (provider %s)\n\n", t.Name, t.Version, r.Provider)
	fmt.Fprintf(w, "%s\n\n", wrap(t.Description, 78))
	caps := "none"
	if len(t.CapabilityRequired) > 0 {
		var cs []string
		for _, c := range t.CapabilityRequired {
			cs = append(cs, c.String())
		}
		caps = strings.Join(cs, ", ")
	}
	if isSpaceTool(t) && !t.Destructive {
		caps += " (and ReadSpace(<space>) for the space named in each call)"
	}
	fmt.Fprintf(w, "trust:        %s\nlatency:      %s\nidempotent:   %s\neffect:       %s\ncapabilities: %s\n", t.Trust, t.LatencyClass, yesNo(t.Idempotent), effect(t), caps)
	if t.Destructive {
		fmt.Fprintln(w, "confirm:      yes (a person allows each call: the CLI asks; over HTTP see `airs review`)")
	}
	if t.Lenient {
		fmt.Fprintln(w, "lenient:      yes (params are coerced per the lenient table)")
	}
	if d := t.Deprecation; d != nil {
		fmt.Fprintf(w, "deprecated:   retires %s", d.Sunset.Format("2006-01-02"))
		if d.Replacement != "" {
			fmt.Fprintf(w, "; use %s", d.Replacement)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nparameters:\n%s\n", indentJSON(t.Parameters))
	if len(t.ReturnSchema) > 0 {
		fmt.Fprintf(w, "\nreturns:\n%s\n", indentJSON(t.ReturnSchema))
	}
	if ex := exampleArgs(t.Parameters); ex != "" {
		fmt.Fprintf(w, "\nexample:\n  airs call %s --args '%s'\n", t.Name, ex)
	}
	return nil
}

// effect says what a call of t does: read-only, destructive, or writes
// (neither: it changes something without destroying it).
func effect(t pipeline.Tool) string {
	switch {
	case t.Destructive:
		return "destructive"
	case t.ReadOnly:
		return "read-only"
	}
	return "writes"
}

func isSpaceTool(t pipeline.Tool) bool {
	return bytes.Contains(t.Parameters, []byte(`"space":`))
}

// exampleArgs builds a skeleton call from a schema's required properties.
func exampleArgs(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type    any   `json:"type"`
			Enum    []any `json:"enum"`
			Default any   `json:"default"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Required) == 0 {
		return ""
	}
	var parts []string
	for _, name := range s.Required {
		p := s.Properties[name]
		var v any
		switch {
		case len(p.Enum) > 0:
			v = p.Enum[0]
		case p.Default != nil:
			v = p.Default
		default:
			switch p.Type {
			case "string":
				v = "…"
			case "integer", "number":
				v = 1
			case "boolean":
				v = true
			case "array":
				v = []any{}
			default:
				v = map[string]any{}
			}
		}
		b, _ := json.Marshal(v)
		k, _ := json.Marshal(name)
		parts = append(parts, string(k)+": "+string(b))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func firstSentence(s string, max int) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > max {
		s = string(r[:max-1]) + "…"
	}
	return s
}

func wrap(s string, width int) string {
	var sb strings.Builder
	col := 0
	for _, w := range strings.Fields(s) {
		if col > 0 && col+1+len(w) > width {
			sb.WriteByte('\n')
			col = 0
		} else if col > 0 {
			sb.WriteByte(' ')
			col++
		}
		sb.WriteString(w)
		col += len(w)
	}
	return sb.String()
}

func indentJSON(b []byte) string {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "  ", "  "); err != nil {
		return "  " + string(b)
	}
	return "  " + out.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
