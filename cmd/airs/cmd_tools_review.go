package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/install"
	"github.com/airs-dev/airs/pipeline"
)

// reviewJSON is `airs tools review --json`.
type reviewJSON struct {
	Server      string               `json:"server"`
	Provider    string               `json:"provider"`
	Transport   string               `json:"transport"`
	ServerInfo  string               `json:"server_info,omitempty"`
	Requires    []string             `json:"requires"`
	Agent       string               `json:"agent"`
	Missing     []string             `json:"missing"` // what the agent lacks; empty: granted
	Tools       []pipeline.Tool      `json:"tools"`
	Unavailable []client.Unavailable `json:"unavailable,omitempty"`
	// Pins are the tools' effects as granted or reviewed, by the
	// server's name of each; Changes the tools held because the server
	// lists them otherwise now.
	Pins    map[string]client.Pin `json:"pins,omitempty"`
	Changes []client.Change       `json:"changes"`
}

// reviewOpts are the flags of `airs tools review`.
type reviewOpts struct {
	asJSON, accept bool
	tools          []string // --accept only these (the server's names)
}

// toolsReview shows what granting an MCP server means and, with
// --accept, pins its tools as it lists them now.
func toolsReview(a *app, name string, o reviewOpts) error {
	c, err := a.config()
	if err != nil {
		return err
	}
	cs, ok := c.MCP.Servers[name]
	transport := ""
	var requires []config.Capability
	if ok {
		transport = "stdio: " + strings.Join(append(slices.Clone(cs.Command), cs.Args...), " ")
		if cs.URL != "" {
			transport = "streamable HTTP " + cs.URL
		}
		requires = cs.Requires
	} else {
		inst, _ := install.Load(c.Home)
		i := slices.IndexFunc(inst, func(s install.Server) bool { return s.Name == name && s.Approved })
		if i < 0 {
			names := slices.Sorted(func(yield func(string) bool) {
				for n := range c.MCP.Servers {
					if !yield(n) {
						return
					}
				}
			})
			for _, s := range inst {
				if s.Approved {
					names = append(names, s.Name+" (installed)")
				}
			}
			known := "none is configured"
			if len(names) > 0 {
				known = "configured: " + strings.Join(names, ", ")
			}
			return fmt.Errorf("no MCP server %q in airs.yaml (%s): add it under mcp.servers (see `airs help config`)", name, known)
		}
		transport = "stdio: " + strings.Join(append(slices.Clone(inst[i].Command), inst[i].Args...), " ") + " (installed " + inst[i].Package + "@" + inst[i].Version + ")"
		for _, r := range inst[i].Requires {
			if cp, err := config.ParseCapability(r); err == nil {
				requires = append(requires, cp)
			}
		}
	}
	if len(o.tools) > 0 && !o.accept {
		return usagef("'tools review %s %s': tool names go with --accept (accept only those)", name, strings.Join(o.tools, " "))
	}
	if _, err := a.registry(); err != nil {
		return err
	}
	conn := a.mcp.Conn(name)
	if conn == nil {
		return fmt.Errorf("MCP server %s did not start (the warning above says why): fix mcp.servers.%s in airs.yaml", name, name)
	}
	if o.accept {
		if err := conn.Accept(context.Background(), o.tools...); err != nil {
			return err
		}
		which := "every tool"
		if len(o.tools) > 0 {
			which = strings.Join(o.tools, ", ")
		}
		fmt.Fprintf(a.stderr, "airs: accepted %s of %s as it lists them now; airs processes running follow within %v\n", which, name, client.PinPoll)
	}
	r, err := reviewOf(a, name, transport, requires, conn)
	if err != nil {
		return err
	}
	return printReview(a, r, o.asJSON)
}

// reviewOf gathers what review shows of a connected server.
func reviewOf(a *app, name, transport string, requires []config.Capability, conn *client.Conn) (reviewJSON, error) {
	caller, err := a.caller()
	if err != nil {
		return reviewJSON{}, err
	}
	r := reviewJSON{Server: name, Provider: client.ProviderID(name), Agent: caller, Transport: transport, Tools: conn.Tools(), Unavailable: conn.Unavailable(),
		Changes: conn.Changes()}
	if r.Pins, err = conn.Pins(); err != nil {
		return reviewJSON{}, err
	}
	if n, v := conn.ServerInfo(); n != "" {
		r.ServerInfo = strings.TrimSpace(n + " " + v)
	}
	reqs := append([]pipeline.Capability{client.Capability(name)}, settings.Capabilities(requires)...)
	r.Missing = []string{}
	for _, q := range reqs {
		r.Requires = append(r.Requires, q.String())
		if !a.policy.Holds(caller, q) {
			r.Missing = append(r.Missing, q.String())
		}
	}
	return r, nil
}

func printReview(a *app, r reviewJSON, asJSON bool) error {
	name, caller := r.Server, r.Agent
	if asJSON {
		return writeJSON(a.stdout, r)
	}
	w := a.stdout
	fmt.Fprintf(w, "MCP server %s (%s)\n", name, r.Transport)
	if r.ServerInfo != "" {
		fmt.Fprintf(w, "it says it is: %s\n", r.ServerInfo)
	}
	fmt.Fprintf(w, "provider: %s · trust: %s (community) · tools: %d offered, %d not\n\n", r.Provider, pipeline.TL0, len(r.Tools), len(r.Unavailable))
	fmt.Fprintf(w, "Granting it: an agent may call its tools once it holds all of\n  %s\n", strings.Join(r.Requires, ", "))
	fmt.Fprintf(w, "(agents.NAME.capabilities in airs.yaml). Every call still takes the seven stages: the\n")
	fmt.Fprintf(w, "server's inputSchema is enforced, and a destructive tool's call waits for a person.\n")
	if len(r.Missing) == 0 {
		fmt.Fprintf(w, "You (agent %s) hold them: you may call its tools.\n\n", caller)
	} else {
		fmt.Fprintf(w, "You (agent %s) lack %s: none of its tools is callable by you until you add\n  %s\nto agents.%s.capabilities.\n\n",
			caller, strings.Join(r.Missing, ", "), `"`+strings.Join(r.Missing, `", "`)+`"`, caller)
	}
	ns := name + "."
	if len(r.Tools) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tEFFECT\tIDEMPOTENT\tCONFIRM\tPINNED")
		for _, t := range r.Tools {
			short := t.Name[strings.IndexByte(t.Name, '.')+1:]
			pinned := "no: held"
			if p, ok := r.Pins[short]; ok && !slices.ContainsFunc(r.Changes, func(c client.Change) bool { return c.Tool == short }) {
				pinned = p.By
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, effect(t), yesNo(t.Idempotent), yesNo(t.Destructive), pinned)
		}
		tw.Flush()
		fmt.Fprintln(w, "\nEffect is pinned as the server was first listed (its grant) or as you accepted it")
		fmt.Fprintln(w, "here; its annotations are its claims, read then: readOnlyHint → read-only; otherwise")
		fmt.Fprintln(w, "destructiveHint (absent: true, as the MCP spec says) → destructive, else writes.")
		fmt.Fprintf(w, "mcp.servers.%s.tools.TOOL.effect in airs.yaml states one outright.\n", name)
		fmt.Fprintln(w, "\nDescriptions, whole (the model reads them; text that gives orders is a warning sign):")
		for _, t := range r.Tools {
			fmt.Fprintf(w, "  %s:\n%s\n", t.Name, indent(t.Description, "      "))
		}
	}
	if len(r.Changes) > 0 {
		fmt.Fprintf(w, "\nHeld: listed otherwise than when granted; each call waits for a person, and the\nmodel reads the granted description, until you accept the tool as it is now:\n")
		for _, c := range r.Changes {
			if c.Pinned == nil {
				fmt.Fprintf(w, "  %s%s: new since the grant; claims %s\n", ns, c.Tool, c.Claimed)
			} else {
				fmt.Fprintf(w, "  %s%s: claims %s now, pinned %s (%s)\n", ns, c.Tool, c.Claimed, c.Pinned.Effect, c.Pinned.By)
				if c.Pinned.Description != c.Description {
					fmt.Fprintf(w, "    description granted:\n%s\n", indent(c.Pinned.Description, "      "))
				}
			}
			fmt.Fprintf(w, "    description now:\n%s\n", indent(c.Description, "      "))
		}
		fmt.Fprintf(w, "Accept with: airs tools review %s --accept [TOOL…]\n", name)
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintf(w, "\nListed but not offered:\n")
		for _, u := range r.Unavailable {
			fmt.Fprintf(w, "  %s: %s\n", u.Tool, reasonLine(u.Reason))
		}
	}
	return nil
}

// indent prefixes every line of s (a description, whole).
func indent(s, prefix string) string {
	if strings.TrimSpace(s) == "" {
		return prefix + "(none)"
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

func reasonLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
