package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// Runner starts chains on Temporal for a replica that serves requests
// (`airs serve`, `airs run`, `airs plan --run`, chat plans) and waits for
// each one's result, which it gives in chains.Run's shape with chains.Run's
// errors: a caller cannot tell where the chain ran, except that it survives
// the death of the replica that started it (the workflow goes on; the
// caller's connection does not).
//
// It dials on first use and keeps the client; a failed dial is tried again
// on the next run.
type Runner struct {
	Address, Namespace, TaskQueue string
	// HeartbeatTimeout and MaxAttempts go to every RunRequest (0: the
	// defaults).
	HeartbeatTimeout time.Duration
	MaxAttempts      int
	// OnStart, when set, is told each run's workflow id as it starts.
	OnStart func(runID string)

	mu sync.Mutex
	c  client.Client
}

// ExecutionGrace is how long past the chain's budget the workflow may run
// (its execution timeout is the budget plus this): the workflow ends its
// calls at the budget itself and reports what finished; the execution
// timeout is the backstop for workers that never answer.
const ExecutionGrace = 30 * time.Second

// NoWorkerWait is how long Run waits for a worker to poll the task queue
// before it answers NoWorker.
const NoWorkerWait = 5 * time.Second

// Unreachable: the Temporal frontend did not answer. It is of kind
// provider_unavailable (HTTP 503, exit 18): nothing ran.
type Unreachable struct {
	Address, Namespace string
	Err                error
}

func (e *Unreachable) Error() string {
	return fmt.Sprintf("chains run on Temporal (chains.engine: temporal) but its server at %s (namespace %s) cannot be reached: %v; "+
		"start it (scripts/temporal.sh starts a dev server; in production, the Temporal cluster) or fix chains.address in airs.yaml", e.Address, e.Namespace, e.Err)
}
func (e *Unreachable) Unwrap() error { return e.Err }

// Hint replaces provider_unavailable's (a cooldown, another provider).
func (e *Unreachable) Hint() string {
	return "start the Temporal server at " + e.Address + " (scripts/temporal.sh runs a dev server) or point chains.address in airs.yaml at one"
}
func (e *Unreachable) Kind() string         { return pipeline.KindProviderUnavailable }
func (e *Unreachable) Is(target error) bool { return target == pipeline.ErrProviderUnavailable }

// NoWorker: no `airs worker` polls the task queue, so a chain started there
// would wait for one. Of kind provider_unavailable: nothing ran.
type NoWorker struct{ Address, TaskQueue string }

func (e *NoWorker) Error() string {
	return fmt.Sprintf("no airs worker polls task queue %s on Temporal at %s: start `airs worker` on a replica (same airs.yaml chains: section), then run the chain again", e.TaskQueue, e.Address)
}
func (e *NoWorker) Kind() string { return pipeline.KindProviderUnavailable }

// Hint replaces provider_unavailable's (a cooldown, another provider).
func (e *NoWorker) Hint() string {
	return "start `airs worker` (same chains: section of airs.yaml) on a replica, then run the chain again"
}
func (e *NoWorker) Is(target error) bool { return target == pipeline.ErrProviderUnavailable }

func (r *Runner) client() (client.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		return r.c, nil
	}
	c, err := Dial(r.Address, r.Namespace, nil)
	if err != nil {
		return nil, err
	}
	r.c = c
	return c, nil
}

// Close closes the client.
func (r *Runner) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

func (r *Runner) unreachable(err error) error {
	var un *serviceerror.Unavailable
	var de *serviceerror.DeadlineExceeded
	if errors.As(err, &un) || errors.As(err, &de) {
		return &Unreachable{Address: r.Address, Namespace: r.Namespace, Err: err}
	}
	return err
}

// NewRunID is a run id in chains.Run's form.
func NewRunID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "chain-" + hex.EncodeToString(b[:])
}

// Run starts req as a workflow and waits for its result. The chain's
// budget is req.Timeout or what is left of ctx's deadline, the earlier;
// when ctx is cancelled (the caller gave up) the workflow is cancelled and
// Run returns what finished with ctx's error, as chains.Run does. The
// caller validated the chain already (the worker validates it again).
func (r *Runner) Run(ctx context.Context, req RunRequest) (*chains.Result, error) {
	c, err := r.client()
	if err != nil {
		return nil, err
	}
	if req.RunID == "" {
		req.RunID = NewRunID()
	}
	if req.HeartbeatTimeout == 0 {
		req.HeartbeatTimeout = r.HeartbeatTimeout
	}
	if req.MaxAttempts == 0 {
		req.MaxAttempts = r.MaxAttempts
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		if left <= 0 {
			return nil, fmt.Errorf("chain: %w", context.DeadlineExceeded)
		}
		if req.Timeout <= 0 || left < req.Timeout {
			req.Timeout = left
		}
	}
	// A chain started on a queue nobody polls would wait for a worker
	// until its budget ran out: say so now.
	// A worker that is starting gets NoWorkerWait to poll.
	for waited := time.Duration(0); ; waited += 250 * time.Millisecond {
		dq, err := c.DescribeTaskQueue(ctx, r.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return nil, r.unreachable(fmt.Errorf("describe task queue %s: %w", r.TaskQueue, err))
		}
		if len(dq.GetPollers()) > 0 {
			break
		}
		if waited >= NoWorkerWait {
			return nil, &NoWorker{Address: r.Address, TaskQueue: r.TaskQueue}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("chain: waiting for a worker on task queue %s: %w", r.TaskQueue, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	opts := client.StartWorkflowOptions{ID: req.RunID, TaskQueue: r.TaskQueue}
	if req.Timeout > 0 {
		opts.WorkflowExecutionTimeout = req.Timeout + ExecutionGrace
	}
	run, err := c.ExecuteWorkflow(ctx, opts, WorkflowName, req)
	if err != nil {
		return nil, r.unreachable(fmt.Errorf("start chain on Temporal at %s: %w", r.Address, err))
	}
	if r.OnStart != nil {
		r.OnStart(run.GetID())
	}
	// The caller's cancellation cancels the workflow; its deadline does not
	// (the workflow keeps the same budget and reports what finished).
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			_ = c.CancelWorkflow(cctx, run.GetID(), run.GetRunID())
		}
	})
	defer stop()
	gctx := context.WithoutCancel(ctx)
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		gctx, cancel = context.WithTimeout(gctx, req.Timeout+ExecutionGrace+5*time.Second)
		defer cancel()
	}
	var res RunResult
	if err := run.Get(gctx, &res); err != nil {
		return nil, r.runError(run.GetID(), req, err)
	}
	if res.Stopped == StoppedCancelled && ctx.Err() != nil {
		return res.Result(), fmt.Errorf("chain %s: %w", res.Chain, ctx.Err())
	}
	return res.Result(), res.Err()
}

// runError maps the end of a workflow that produced no result.
func (r *Runner) runError(id string, req RunRequest, err error) error {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrTypeInvalid {
		return fmt.Errorf("%w: chain run %s: the worker refused it: %s (its catalog or grants differ from this replica's?)", chains.ErrInvalid, id, ae.Error())
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("chain run %s: %w: the workflow did not end within its budget (%v) plus %v: are the workers alive and on task queue %s?",
			id, context.DeadlineExceeded, req.Timeout.Round(time.Millisecond), ExecutionGrace, r.TaskQueue)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("chain run %s: %w: no result from Temporal within the budget and its grace", id, context.DeadlineExceeded)
	}
	return r.unreachable(fmt.Errorf("chain run %s: %s", id, rootMessage(err)))
}
