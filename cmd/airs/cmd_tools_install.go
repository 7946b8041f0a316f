package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
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
	npm            string // the npm client ("" = npm on $PATH); tests set it
}

// toolsInstall installs an MCP server from npm into AIRS_HOME without
// running any of its code, shows what was installed, and starts it to
// list its tools only once the user says so; its tools are offered only
// after a second yes, pinned as reviewed.
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
	var reqs []config.Capability
	var reqText []string
	for _, r := range strings.Split(o.requires, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		cp, err := config.ParseCapability(r)
		if err != nil {
			return usagef("--requires: %v", err)
		}
		reqs = append(reqs, cp)
		reqText = append(reqText, cp.String())
	}
	ctx := context.Background()
	fmt.Fprintf(a.stderr, "airs: installing %s@%s into %s: its whole dependency tree from a lock file with integrity hashes, install scripts off\n", pkg, version, c.Home)
	s, err := install.Install(ctx, c.Home, install.Server{Name: name, Package: pkg, Version: version, Args: o.args, Requires: reqText}, o.npm, a.stderr)
	if err != nil {
		return err
	}
	pins := engine.MCPPins(c)
	undo := func(why string) error {
		install.Remove(c.Home, name)
		pins.Forget(name)
		fmt.Fprintf(a.stderr, "airs: %s; %s was removed again\n", why, name)
		return nil
	}
	pkgs, err := install.Packages(c.Home, s)
	if err != nil {
		undo("its lock file does not read")
		return err
	}
	printInstalled(a.stdout, s, pkgs, reqText)
	in := bufio.NewReader(a.stdin)
	if !o.yes && !ask(a, in, fmt.Sprintf("\nStart %s to list its tools (its code runs from here on)? [y/N] ", name)) {
		return undo("not started")
	}
	// Started on a registry of its own, with the minimal environment every
	// stdio server gets, to show what it offers.
	cs, err := engine.MCPServer(mcpServerOf(s, reqs), a.logger(), versionString())
	if err != nil {
		return err
	}
	cs.Pins = pins
	conn, err := client.Connect(ctx, pipeline.NewRegistry(pipeline.RegistryConfig{}), cs)
	if err != nil {
		undo("it did not start")
		return err
	}
	defer conn.Close()
	r, err := reviewOf(a, name, "stdio: "+strings.Join(append(append([]string{}, s.Command...), s.Args...), " "), reqs, conn)
	if err != nil {
		return err
	}
	if err := printReview(a, r, o.asJSON); err != nil {
		return err
	}
	if !o.yes && !ask(a, in, fmt.Sprintf("\nOffer %s's %d tools in AIRS, as shown? [y/N] ", name, len(r.Tools))) {
		return undo("not offered")
	}
	// What the user saw is what is pinned: a later listing that differs
	// is held until it is reviewed again.
	if err := conn.Accept(ctx); err != nil {
		return err
	}
	if err := install.Approve(c.Home, name); err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "airs: %s is offered from now on (its files are checked against the recorded hashes at each start); callers need %s\n", name, strings.Join(r.Requires, ", "))
	return nil
}

// ask prints question and reports whether the answer is yes.
func ask(a *app, in *bufio.Reader, question string) bool {
	fmt.Fprint(a.stderr, question)
	line, _ := in.ReadString('\n')
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes"
}

// printInstalled is what can be known of an installed server before any
// of its code runs: the package, its whole tree, what it will run.
func printInstalled(w io.Writer, s install.Server, pkgs []install.Package, requires []string) {
	fmt.Fprintf(w, "Installed, not started: %s@%s as MCP server %s\n", s.Package, s.Version, s.Name)
	fmt.Fprintf(w, "integrity: %s\n", s.Integrity)
	fmt.Fprintf(w, "it would run: %s\n", strings.Join(append(append([]string{}, s.Command...), s.Args...), " "))
	fmt.Fprintf(w, "with the environment HOME, PATH, LANG, TERM, USER, LOGNAME, SHELL only\n")
	fmt.Fprintf(w, "its tools would require: %s\n", strings.Join(append([]string{client.Capability(s.Name).String()}, requires...), ", "))
	fmt.Fprintf(w, "its tree, %d packages, each pinned by its integrity hash:\n", len(pkgs))
	for i := 0; i < len(pkgs); {
		j := i + 1
		for j < len(pkgs) && pkgs[j].Name == pkgs[i].Name && pkgs[j].Version == pkgs[i].Version {
			j++
		}
		copies := ""
		if j-i > 1 {
			copies = fmt.Sprintf(" (%d copies)", j-i)
		}
		fmt.Fprintf(w, "  %s@%s%s\n", pkgs[i].Name, pkgs[i].Version, copies)
		i = j
	}
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
	if err := engine.MCPPins(c).Forget(name); err != nil {
		return fmt.Errorf("removed MCP server %s, but not its tools' pins: %v", name, err)
	}
	fmt.Fprintf(a.stderr, "airs: removed MCP server %s\n", name)
	return nil
}

// mcpServerOf is an installed server as configuration (no restarts: it is
// started once, for the review).
func mcpServerOf(s install.Server, reqs []config.Capability) config.MCPServer {
	return config.MCPServer{Name: s.Name, Command: s.Command, Args: s.Args, Requires: reqs, Sampling: config.DefaultMCPSampling}
}
