package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompts are the YAML pipelines (chains' DSL) of Options.Pipelines: a
// pipeline is a prompt named by its `pipeline:` name, described by its
// `description:`, whose arguments are its inputs (required when they have
// no default). Only pipelines the caller could run are listed: each is
// validated against the caller's tools (chains.Validate), so a pipeline
// using a tool the caller may not call is not offered. The files are read
// again for every request, so an edited pipeline shows at once; reading is
// bounded (maxPipelines files of at most maxPipelineBytes).

const (
	maxPipelines     = 200
	maxPipelineBytes = 1 << 20
)

// pipelinePrompt is one pipeline the caller may run.
type pipelinePrompt struct {
	file  string
	chain *chains.Chain
}

func (s *Server) addPrompts() {
	if len(s.opts.Pipelines) == 0 {
		return
	}
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "prompts/list":
				return s.listPrompts(), nil
			case "prompts/get":
				if p, ok := req.GetParams().(*mcp.GetPromptParams); ok && p != nil {
					return s.getPrompt(p.Name, p.Arguments)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// toolCatalog is chains.Catalog over the tools the backend gives the
// caller: the same set tools/list shows.
type toolCatalog map[string]pipeline.Tool

func (c toolCatalog) Tool(_, name string) (pipeline.Tool, error) {
	if t, ok := c[name]; ok {
		return t, nil
	}
	return pipeline.Tool{}, &pipeline.ToolNotFound{Tool: name}
}

// pipelineFiles are the YAML files Options.Pipelines names, in order.
func (s *Server) pipelineFiles() []string {
	var out []string
	for _, p := range s.opts.Pipelines {
		st, err := os.Stat(p)
		if err != nil {
			s.opts.Logger.Warn("mcp: a pipelines path is not readable", "path", p, "reason", err)
			continue
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			s.opts.Logger.Warn("mcp: a pipelines folder is not readable", "path", p, "reason", err)
			continue
		}
		for _, e := range ents {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	if len(out) > maxPipelines {
		s.opts.Logger.Warn("mcp: too many pipelines; the rest are not offered as prompts", "max", maxPipelines, "found", len(out))
		out = out[:maxPipelines]
	}
	return out
}

// prompts are the pipelines the caller may run, by prompt name.
func (s *Server) prompts() (map[string]pipelinePrompt, []string) {
	cat := toolCatalog{}
	for _, t := range s.b.Tools(s.caller) {
		if _, dup := cat[t.Name]; !dup {
			cat[t.Name] = t
		}
	}
	byName := map[string]pipelinePrompt{}
	var order []string
	for _, f := range s.pipelineFiles() {
		c, err := readPipeline(f)
		if err != nil {
			s.opts.Logger.Warn("mcp: a pipeline does not parse; it is not offered as a prompt", "file", f, "reason", err)
			continue
		}
		if err := c.Validate(cat, s.caller); err != nil {
			// Usually a tool this caller may not call: normal, not a fault.
			s.opts.Logger.Info("mcp: a pipeline is not offered as a prompt", "file", f, "caller", s.caller, "reason", err)
			continue
		}
		name := c.Name
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		}
		if prev, dup := byName[name]; dup {
			s.opts.Logger.Warn("mcp: two pipelines have one name; the first is offered", "name", name, "first", prev.file, "second", f)
			continue
		}
		byName[name] = pipelinePrompt{file: f, chain: c}
		order = append(order, name)
	}
	slices.Sort(order)
	return byName, order
}

func readPipeline(file string) (*chains.Chain, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPipelineBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxPipelineBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxPipelineBytes)
	}
	return chains.Parse(file, data)
}

// inputNames are a chain's inputs in name order.
func inputNames(c *chains.Chain) []string {
	var names []string
	for n := range c.Inputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func promptOf(name string, p pipelinePrompt) *mcp.Prompt {
	pr := &mcp.Prompt{Name: name, Title: "pipeline " + name, Description: p.chain.Description}
	for _, n := range inputNames(p.chain) {
		in := p.chain.Inputs[n]
		desc := in.Description
		if in.Type != "" {
			desc = strings.TrimSpace(desc + " (" + in.Type + ")")
		}
		if in.HasDefault {
			desc += fmt.Sprintf("; default %v", in.Default)
		}
		pr.Arguments = append(pr.Arguments, &mcp.PromptArgument{Name: n, Description: desc, Required: !in.HasDefault})
	}
	return pr
}

func (s *Server) listPrompts() *mcp.ListPromptsResult {
	byName, order := s.prompts()
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}
	res.CacheScope = "private" // the caller's pipelines
	for _, n := range order {
		res.Prompts = append(res.Prompts, promptOf(n, byName[n]))
	}
	return res
}

// getPrompt is the pipeline as a message for the client's model: what it
// does, the steps (which tool, in which order), the arguments given, and
// how to run it whole with `airs run`.
func (s *Server) getPrompt(name string, args map[string]string) (*mcp.GetPromptResult, error) {
	byName, order := s.prompts()
	p, ok := byName[name]
	if !ok {
		return nil, invalidParams(fmt.Sprintf("no prompt %q: prompts/list names the pipelines you may run (%s)", name, strings.Join(order, ", ")))
	}
	var missing, unknown []string
	for _, n := range inputNames(p.chain) {
		if _, given := args[n]; !given && !p.chain.Inputs[n].HasDefault {
			missing = append(missing, n)
		}
	}
	for n := range args {
		if p.chain.Inputs != nil && p.chain.Inputs[n] == nil {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(unknown)
	var errs []error
	if len(missing) > 0 {
		errs = append(errs, fmt.Errorf("missing required arguments: %s", strings.Join(missing, ", ")))
	}
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("pipeline %s has no inputs %s (it takes: %s)", name, strings.Join(unknown, ", "), strings.Join(inputNames(p.chain), ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, invalidParams(strings.ReplaceAll(err.Error(), "\n", "; "))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Run the AIRS pipeline %q", name)
	if d := p.chain.Description; d != "" {
		fmt.Fprintf(&b, ": %s", d)
	}
	b.WriteString("\n\nInputs:\n")
	run := "airs run " + p.file
	for _, n := range inputNames(p.chain) {
		v, given := args[n]
		if !given {
			fmt.Fprintf(&b, "- %s = %v (default)\n", n, p.chain.Inputs[n].Default)
			continue
		}
		fmt.Fprintf(&b, "- %s = %q\n", n, v)
		run += fmt.Sprintf(" --input %s=%s", n, shellQuote(v))
	}
	b.WriteString("\nSteps (call these tools in this order; a step's arguments may use earlier steps' outputs):\n")
	for i, st := range p.chain.Steps {
		each := ""
		if st.Foreach != nil {
			each = " (once per element of a list)"
		}
		fmt.Fprintf(&b, "%d. %s: the tool %s%s\n", i+1, st.ID, st.Tool, each)
	}
	fmt.Fprintf(&b, "\nOr run it whole from a shell: %s\n", run)
	return &mcp.GetPromptResult{
		Description: p.chain.Description,
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	}, nil
}

// shellQuote quotes v for a POSIX shell when it needs it.
func shellQuote(v string) string {
	if v != "" && strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
