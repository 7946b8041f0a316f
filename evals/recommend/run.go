package recommend

import (
	"fmt"
	"io"

	"github.com/airs-dev/airs/evals/report"
)

// RunOptions are `airs eval recommend`'s inputs.
type RunOptions struct {
	Train     string // training conversations; "" = cross-validation over Data
	Data      string // test conversations
	Functions string // the functions file
	Folds     int    // cross-validation folds (5)
	JSON      bool
	// LearningCurve, when set, also runs the simulated user (with and
	// without learning) and writes the plot (PNG) there.
	LearningCurve string
	Options       Options // zero: DefaultOptions
}

// Run evaluates the four methods and prints them (JSON lines or a table);
// with LearningCurve it also runs the simulation, prints its two lines and
// writes the plot.
func Run(o RunOptions, w io.Writer) ([]Result, []SimResult, error) {
	if o.Options.Epochs == 0 {
		o.Options = DefaultOptions()
	}
	if o.Folds == 0 {
		o.Folds = 5
	}
	funcs, err := LoadFunctions(o.Functions)
	if err != nil {
		return nil, nil, err
	}
	test, err := LoadConversations(o.Data)
	if err != nil {
		return nil, nil, err
	}
	var rs []Result
	if o.Train != "" {
		train, err := LoadConversations(o.Train)
		if err != nil {
			return nil, nil, err
		}
		rs = TrainTest(train, test, funcs, o.Options)
	} else {
		if o.Folds < 2 || o.Folds > len(test) {
			return nil, nil, fmt.Errorf("--folds %d: need 2 to %d (the number of conversations)", o.Folds, len(test))
		}
		rs = CrossValidate(test, funcs, o.Folds, o.Options)
	}
	if o.JSON {
		if err := WriteJSON(w, rs); err != nil {
			return nil, nil, err
		}
	} else {
		how := fmt.Sprintf("%d-fold cross-validation by conversation over %s", o.Folds, o.Data)
		if o.Train != "" {
			how = fmt.Sprintf("trained on %s, scored on %s", o.Train, o.Data)
		}
		fmt.Fprintln(w, how)
		WriteTable(w, rs)
	}
	var sims []SimResult
	if o.LearningCurve != "" {
		if sims, err = LearningCurve(o.LearningCurve, funcs); err != nil {
			return nil, nil, err
		}
		for _, s := range sims {
			if o.JSON {
				if err := writeJSONLine(w, s); err != nil {
					return nil, nil, err
				}
			} else {
				fmt.Fprintf(w, "%-28s acceptance per %d: %v  first 100 %.2f, last 100 %.2f\n", s.Method, s.Window, s.Acceptance, s.First100, s.Last100)
			}
		}
	}
	return rs, sims, nil
}

// LearningCurve simulates DefaultSimUser on 500 recommendations with and
// without learning (seed 1) and plots both acceptance curves into path.
func LearningCurve(path string, funcs []Function) ([]SimResult, error) {
	u := DefaultSimUser()
	sims := []SimResult{
		Simulate(funcs, u, SimOptions{Learn: true, Seed: 1}),
		Simulate(funcs, u, SimOptions{Learn: false, Seed: 1}),
	}
	var xs []float64
	for i := range sims[0].Acceptance {
		xs = append(xs, float64((i+1)*sims[0].Window))
	}
	var series []report.Series
	for _, s := range sims {
		series = append(series, report.Series{Name: s.Method, Values: s.Acceptance})
	}
	title := fmt.Sprintf("Simulated user: acceptance per %d recommendations", sims[0].Window)
	if err := report.LineChart(path, title, "recommendations so far", "accepted", xs, series...); err != nil {
		return nil, err
	}
	return sims, nil
}
