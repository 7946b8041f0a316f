package temporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Register puts the workflow and a's activities on w.
func Register(w worker.Registry, a *Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Prepare, activity.RegisterOptions{Name: PrepareActivityName})
	w.RegisterActivityWithOptions(a.Items, activity.RegisterOptions{Name: ItemsActivityName})
	w.RegisterActivityWithOptions(a.Output, activity.RegisterOptions{Name: OutputActivityName})
	w.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: CallActivityName})
}

// NewWorker returns a worker on taskQueue that runs chains with a's
// pipeline; Start or Run it.
func NewWorker(c client.Client, taskQueue string, a *Activities) (worker.Worker, error) {
	if a == nil || a.Executor == nil || a.Catalog == nil {
		return nil, errors.New("temporal: the worker needs the replica's pipeline (Activities.Executor) and catalog")
	}
	w := worker.New(c, taskQueue, worker.Options{})
	Register(w, a)
	return w, nil
}

// Dial connects to the Temporal frontend at address (host:port); its error
// is an *Unreachable that says what to start. The SDK
// logs through logger (nil: warnings and errors to stderr; the SDK's own
// default writes to stdout).
func Dial(address, namespace string, logger *slog.Logger) (client.Client, error) {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	c, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: tlog.NewStructuredLogger(logger)})
	if err != nil {
		return nil, &Unreachable{Address: address, Namespace: namespace, Err: err}
	}
	return c, nil
}

// Start starts a chain run; the workflow id is req.RunID (random when
// empty). A run id already used by a finished run is refused by Temporal.
func Start(ctx context.Context, c client.Client, taskQueue string, req RunRequest) (client.WorkflowRun, error) {
	opts := client.StartWorkflowOptions{ID: req.RunID, TaskQueue: taskQueue}
	return c.ExecuteWorkflow(ctx, opts, WorkflowName, req)
}

// Run starts a chain run and waits for its result. err is the chain's error
// (a failed step, or a chain that does not validate); the result is
// non-nil whenever the chain started.
func Run(ctx context.Context, c client.Client, taskQueue string, req RunRequest) (*RunResult, error) {
	run, err := Start(ctx, c, taskQueue, req)
	if err != nil {
		return nil, err
	}
	var res RunResult
	if err := run.Get(ctx, &res); err != nil {
		return nil, fmt.Errorf("chain run %s: %s", run.GetID(), rootMessage(err))
	}
	return &res, res.Err()
}
