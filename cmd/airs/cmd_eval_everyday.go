package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/airs-dev/airs/evals/everyday"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// everydayHome is the fixture home the committed suites are written for.
var everydayHome = filepath.Join("evals", "everyday", "testdata", "home")

// evalEveryday is `airs eval everyday`: everyday requests planned in no-LLM
// mode, each compared with the plan a person meant (EVALS.md).
func evalEveryday(a *app, args []string) error {
	fs := a.flags()
	suite := fs.String("suite", filepath.Join("evals", "everyday", "testdata", "dev.jsonl"), "the requests with their expected plans, one JSON case a line")
	toolsFile := fs.String("tools", filepath.Join("evals", "everyday", "testdata", "tools.json"), "outside (MCP-style) tools registered beside the built-ins for the run (\"\": none)")
	asJSON := fs.Bool("json", false, `print {"n","right","accuracy",…} and every miss as JSON`)
	fs.Usage = func() {
		fmt.Fprint(a.stderr, `Usage:
  airs eval everyday [--suite FILE] [--tools FILE] [--json]

Plans each request of the suite in no-LLM mode (nothing runs) and compares
the plan with the one a person meant: the same steps in order, each with the
same tool, arguments and foreach (a calculator expression by its value); or
the same choices when several files fit equally; or the same kind of error
(a file that is nowhere, a space that does not exist). Prints the share
right, the requests that got a destructive step without asking for one, and
every miss.

Without --config it runs in the suites' fixture home,
evals/everyday/testdata/home (run from the repository). The held-out set,
never tuned on: --suite evals/everyday/testdata/heldout.jsonl.

Flags:
`)
		fs.PrintDefaults()
	}
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'eval everyday' takes no arguments, only --suite, --tools and --json")
	}
	cases, err := everyday.Load(*suite)
	if err != nil {
		return err
	}
	if a.configFlag == "" && a.cfg == nil {
		a.configFlag = filepath.Join(everydayHome, "airs.yaml")
		if _, err := os.Stat(a.configFlag); err != nil {
			return fmt.Errorf("no --config, and the fixture home is not here (%v): run from the repository, or pass --config", err)
		}
	}
	if *toolsFile != "" {
		ts, err := everyday.Tools(*toolsFile)
		if err != nil {
			return err
		}
		reg, err := a.registry()
		if err != nil {
			return err
		}
		for _, t := range ts {
			if err := reg.Register("mcp:eval", t, refuseHandler{}); err != nil {
				return fmt.Errorf("registering %s: %w", t.Name, err)
			}
		}
	}
	caller, err := a.caller()
	if err != nil {
		return err
	}
	e, closeAll, err := a.build(a.context(), engineSpec{Channel: "run", Model: "none"})
	if err != nil {
		return err
	}
	defer closeAll()
	if err := e.Reindex(a.context()); err != nil {
		return err
	}
	rep, err := everyday.Run(a.context(), cases, func(ctx context.Context, q string) (everyday.Outcome, error) {
		return planOutcome(ctx, e, caller, q), nil
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(a.stdout, rep)
	}
	fmt.Fprintf(a.stdout, "everyday requests: %d, planned right %d (%.1f%%); destructive steps not asked for: %d\n", rep.N, rep.Right, 100*rep.Accuracy, rep.DestructiveUnasked)
	for _, m := range rep.Misses {
		w, _ := json.Marshal(m.Expected)
		g, _ := json.Marshal(m.Got)
		fmt.Fprintf(a.stdout, "  miss [%s] %s\n    expected %s\n    got      %s\n", m.Kind, m.Q, w, g)
	}
	return nil
}

// planOutcome is the engine's no-LLM plan for q as the eval compares it.
func planOutcome(ctx context.Context, e *engine.Engine, caller, q string) everyday.Outcome {
	pr, err := e.Plan(ctx, caller, q)
	var amb *selector.AmbiguousError
	var ms *selector.MissingSpaceError
	var nf *engine.MissingFilesError
	switch {
	case errors.As(err, &amb):
		var out everyday.Outcome
		for _, c := range amb.Choices {
			out.Choices = append(out.Choices, c.Space+":"+c.Path)
		}
		return out
	case errors.As(err, &ms):
		return everyday.Outcome{Error: everyday.ErrSpaceMissing}
	case errors.As(err, &nf):
		return everyday.Outcome{Error: everyday.ErrNotFound}
	case err != nil:
		return everyday.Outcome{Error: err.Error()}
	}
	plan := pr.Plan
	var out everyday.Outcome
	for _, st := range plan.Steps {
		s := everyday.Step{Tool: st.Function, Foreach: st.Foreach}
		_ = json.Unmarshal(st.Arguments, &s.Args)
		if s.Args == nil {
			s.Args = map[string]any{}
		}
		for _, r := range e.ToolProviders(st.Function) {
			s.Destructive = s.Destructive || r.Tool.Destructive
		}
		out.Steps = append(out.Steps, s)
	}
	return out
}

// refuseHandler serves the eval's outside tools: the eval only plans.
type refuseHandler struct{}

func (refuseHandler) Invoke(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
	return nil, errors.New("airs eval everyday: this tool only exists to be planned for")
}

// spacesEnv is the interpretation's environment over the configured
// spaces (their files indexed once), for evaluations that build their own
// selector as the engine does.
func spacesEnv(spaces map[string]string) func(string) understand.Env {
	idx := understand.NewFileIndex()
	var names []string
	for n, dir := range spaces {
		_ = idx.Build(n, dir) // an unreadable space holds nothing to name
		names = append(names, n)
	}
	sort.Strings(names)
	return func(string) understand.Env { return understand.Env{Spaces: names, Index: idx} }
}
