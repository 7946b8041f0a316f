package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/airs-dev/airs/mcp/client"
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
}

// toolsReview shows what granting an MCP server means.
func toolsReview(a *app, name string, asJSON bool) error {
	c, err := a.config()
	if err != nil {
		return err
	}
	cs, ok := c.MCP.Servers[name]
	if !ok {
		var names []string
		for n := range c.MCP.Servers {
			names = append(names, n)
		}
		slices.Sort(names)
		known := "none is configured"
		if len(names) > 0 {
			known = "configured: " + strings.Join(names, ", ")
		}
		return fmt.Errorf("no MCP server %q in airs.yaml (%s): add it under mcp.servers (see `airs help config`)", name, known)
	}
	if _, err := a.registry(); err != nil {
		return err
	}
	conn := a.mcp.Conn(name)
	if conn == nil {
		return fmt.Errorf("MCP server %s did not start (the warning above says why): fix mcp.servers.%s in airs.yaml", name, name)
	}
	transport := "stdio: " + strings.Join(append(slices.Clone(cs.Command), cs.Args...), " ")
	if cs.URL != "" {
		transport = "streamable HTTP " + cs.URL
	}
	r, err := reviewOf(a, name, transport, cs.Requires, conn)
	if err != nil {
		return err
	}
	return printReview(a, r, asJSON)
}

// reviewOf gathers what review shows of a connected server.
func reviewOf(a *app, name, transport string, requires []pipeline.Capability, conn *client.Conn) (reviewJSON, error) {
	caller, err := a.caller()
	if err != nil {
		return reviewJSON{}, err
	}
	r := reviewJSON{Server: name, Provider: client.ProviderID(name), Agent: caller, Transport: transport, Tools: conn.Tools(), Unavailable: conn.Unavailable()}
	if n, v := conn.ServerInfo(); n != "" {
		r.ServerInfo = strings.TrimSpace(n + " " + v)
	}
	reqs := append([]pipeline.Capability{client.Capability(name)}, requires...)
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
	if len(r.Tools) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tEFFECT\tIDEMPOTENT\tCONFIRM\tDESCRIPTION")
		for _, t := range r.Tools {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.Name, effect(t), yesNo(t.Idempotent), yesNo(t.Destructive), firstSentence(t.Description, 60))
		}
		tw.Flush()
		fmt.Fprintln(w, "\nEffect is read from the tool's annotations: readOnlyHint → read-only; otherwise")
		fmt.Fprintln(w, "destructiveHint (absent: true, as the MCP spec says) → destructive, else writes.")
	}
	if len(r.Unavailable) > 0 {
		fmt.Fprintf(w, "\nListed but not offered:\n")
		for _, u := range r.Unavailable {
			fmt.Fprintf(w, "  %s: %s\n", u.Tool, reasonLine(u.Reason))
		}
	}
	return nil
}

func reasonLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
