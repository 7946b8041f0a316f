package selector

import (
	"encoding/json"
	"fmt"

	"github.com/airs-dev/airs/chains"
)

// Plan is a plan as the selector writes it, {"steps": [...]}: its JSON is
// the form chains.ParsePlan compiles (Compile). PlanResult.Plan is one.
type Plan struct {
	Steps []PlanStep `json:"steps"`
}

// PlanStep is one step of a plan: a call of Function with Arguments (whose
// strings may reference earlier steps' outputs, {{steps.ID.output…}}),
// once, or once for each element of Foreach. The fields are in the order
// of their JSON keys, sorted, as plans have always been written on the
// wire and in session logs.
type PlanStep struct {
	Arguments json.RawMessage `json:"arguments"`
	Foreach   string          `json:"foreach,omitempty"`
	Function  string          `json:"function"`
	ID        string          `json:"id"`
}

// ReadPlan reads a plan's JSON (a model's output, or a plan a client sends
// back to run).
func ReadPlan(raw json.RawMessage) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return Plan{}, fmt.Errorf("reading the plan: %w", err)
	}
	return p, nil
}

// Compile is the plan as a chain chains can validate and run.
func (p Plan) Compile() (*chains.Chain, error) {
	if p.Steps == nil {
		p.Steps = []PlanStep{}
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the plan: %w", err)
	}
	return chains.ParsePlan(raw)
}

// emptyPlan is a plan of no steps; its JSON is {"steps":[]}.
func emptyPlan() Plan { return Plan{Steps: []PlanStep{}} }
