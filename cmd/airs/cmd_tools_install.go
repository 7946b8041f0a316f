package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/mcp/client"
	"github.com/airs-dev/airs/mcp/install"
	"github.com/airs-dev/airs/pipeline"
)

// installOpts are the flags of `airs tools install`.
type installOpts struct {
	name, requires string
	yes, asJSON    bool
	args           []string
}

// toolsInstall installs an MCP server from npm into AIRS_HOME, starts it
// once to show its tools, and offers it only if the user says yes.
func toolsInstall(a *app, spec string, o installOpts) error {
	pkg, version, err := install.ParseSpec(spec)
	if err != nil {
		return usagef("%v", err)
	}
	c, err := a.config()
	if err != nil {
		return err
	}
	if err := c.EnsureHome(); err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = install.DefaultName(pkg)
	}
	if _, clash := c.MCP.Servers[name]; clash {
		return fmt.Errorf("airs.yaml already configures an MCP server %s: choose another --name", name)
	}
	var reqs []pipeline.Capability
	var reqText []string
	for _, r := range strings.Split(o.requires, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		cp, err := pipeline.ParseCapability(r)
		if err != nil {
			return usagef("--requires: %v", err)
		}
		reqs = append(reqs, cp)
		reqText = append(reqText, cp.String())
	}
	ctx := context.Background()
	fmt.Fprintf(a.stderr, "airs: npm install --ignore-scripts %s@%s into %s\n", pkg, version, c.Home)
	s, err := install.Install(ctx, c.Home, install.Server{Name: name, Package: pkg, Version: version, Args: o.args, Requires: reqText}, "", a.stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "airs: installed %s@%s (integrity %s)\n", pkg, version, s.Integrity)
	// Start it once, on a registry of its own, to show what it offers.
	cs, err := engine.MCPServer(mcpServerOf(s, reqs), a.logger(), versionString())
	if err != nil {
		return err
	}
	conn, err := client.Connect(ctx, pipeline.NewRegistry(pipeline.RegistryConfig{}), cs)
	if err != nil {
		install.Remove(c.Home, name)
		return fmt.Errorf("%v: it was removed again", err)
	}
	r, err := reviewOf(a, name, "stdio: "+strings.Join(append(append([]string{}, s.Command...), s.Args...), " "), reqs, conn)
	conn.Close()
	if err != nil {
		return err
	}
	if err := printReview(a, r, o.asJSON); err != nil {
		return err
	}
	if !o.yes {
		fmt.Fprintf(a.stderr, "\nOffer %s's %d tools in AIRS? [y/N] ", name, len(r.Tools))
		line, _ := bufio.NewReader(a.stdin).ReadString('\n')
		if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
			install.Remove(c.Home, name)
			fmt.Fprintf(a.stderr, "airs: not offered; %s was removed again\n", name)
			return nil
		}
	}
	if err := install.Approve(c.Home, name); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "airs: %s is offered from now on (its files are checked against the recorded hashes at each start); callers need %s\n", name, strings.Join(r.Requires, ", "))
	return nil
}

// toolsRemove undoes toolsInstall.
func toolsRemove(a *app, name string) error {
	c, err := a.config()
	if err != nil {
		return err
	}
	if err := install.Remove(c.Home, name); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "airs: removed MCP server %s\n", name)
	return nil
}

// mcpServerOf is an installed server as configuration (no restarts: it is
// started once, for the review).
func mcpServerOf(s install.Server, reqs []pipeline.Capability) config.MCPServer {
	return config.MCPServer{Name: s.Name, Command: s.Command, Args: s.Args, Requires: reqs, Sampling: config.DefaultMCPSampling}
}
