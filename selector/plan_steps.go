package selector

import (
	"encoding/json"
	"fmt"
)

// Plan is a plan as the selector writes it, {"steps": [...]}, the form
// chains.ParsePlan compiles: the one typed reading of PlanResult.Plan.
type Plan struct {
	Steps []PlanStep `json:"steps"`
}

// PlanStep is one step of a plan: a call of Function with Arguments (whose
// strings may reference earlier steps' outputs, {{steps.ID.output…}}),
// once, or once for each element of Foreach.
type PlanStep struct {
	ID        string          `json:"id"`
	Function  string          `json:"function"`
	Arguments json.RawMessage `json:"arguments"`
	Foreach   string          `json:"foreach,omitempty"`
}

// ReadPlan reads a plan's JSON (PlanResult.Plan, or a plan a client sends
// back to run).
func ReadPlan(raw json.RawMessage) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(raw, &p); err != nil {
		return Plan{}, fmt.Errorf("reading the plan: %w", err)
	}
	return p, nil
}

// Typed is pr's plan with typed steps; a result without a plan has none.
func (pr *PlanResult) Typed() (Plan, error) {
	if pr == nil || len(pr.Plan) == 0 {
		return Plan{}, nil
	}
	return ReadPlan(pr.Plan)
}
