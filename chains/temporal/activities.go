package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// Activities are the worker side: they hold the replica's pipeline
// (Executor) and catalog, and run each call with chains.Prepared.Call.
type Activities struct {
	Executor chains.Executor // the replica's pipeline.Manager
	Catalog  chains.Catalog
	// Ledger, when set, records the keys of non-idempotent calls as they
	// start, and refuses a key that was started before. Replicas that may
	// take over each other's chains share it (a directory on shared disk).
	// Temporal's own attempt count guards too; the ledger also catches a
	// run re-started under the same run id.
	Ledger *Ledger
	// Worker names this replica in ledger records ("": pid@host).
	Worker string
	// HeartbeatEvery is how often a running call reports it is alive (0:
	// one third of the heartbeat timeout, at most 1 s).
	HeartbeatEvery time.Duration
}

func (a *Activities) prepare(req RunRequest) (*chains.Prepared, error) {
	var (
		c   *chains.Chain
		err error
	)
	switch req.Format {
	case "", "dsl":
		name := req.Filename
		if name == "" {
			name = "chain.yaml"
		}
		c, err = chains.Parse(name, []byte(req.Source))
	case "plan":
		c, err = chains.ParsePlan([]byte(req.Source))
	default:
		err = fmt.Errorf("format %q: want dsl or plan", req.Format)
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalid, nil)
	}
	p, err := chains.Prepare(c, req.Input, chains.Options{Executor: a.Executor, Catalog: a.Catalog, Caller: req.Caller, OnFailure: req.OnFailure})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalid, nil)
	}
	return p, nil
}

// Prepare validates the chain for its caller and describes its steps.
func (a *Activities) Prepare(ctx context.Context, req RunRequest) (Prepared, error) {
	p, err := a.prepare(req)
	if err != nil {
		return Prepared{}, err
	}
	return Prepared{Name: p.Name(), Steps: p.Steps(), Policy: p.FailurePolicy()}, nil
}

// Items returns how many elements a foreach step runs over.
func (a *Activities) Items(ctx context.Context, cr CallRequest) (int, error) {
	p, err := a.prepare(cr.Run)
	if err != nil {
		return 0, err
	}
	items, err := p.Items(cr.Step, cr.Outputs)
	if err != nil {
		return 0, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeToolFailure, nil)
	}
	return len(items), nil
}

// Output renders the chain's output from every step's output.
func (a *Activities) Output(ctx context.Context, cr CallRequest) (json.RawMessage, error) {
	p, err := a.prepare(cr.Run)
	if err != nil {
		return nil, err
	}
	out, err := p.Output(cr.Outputs)
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeToolFailure, nil)
	}
	return out, nil
}

// Call runs one call through the pipeline, heartbeating while it runs so
// that the loss of this worker is seen within the heartbeat timeout.
func (a *Activities) Call(ctx context.Context, cr CallRequest) (*CallResult, error) {
	p, err := a.prepare(cr.Run)
	if err != nil {
		return nil, err
	}
	steps := p.Steps()
	if cr.Step < 0 || cr.Step >= len(steps) {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("step %d of %d", cr.Step, len(steps)), ErrTypeInvalid, nil)
	}
	s := steps[cr.Step]
	key := cr.Key(s.ID)
	info := activity.GetInfo(ctx)
	// The worker's own catalog decides idempotency, not the request.
	if !s.Idempotent {
		if info.Attempt > 1 {
			return nil, notRepeated(key, s.Tool, fmt.Sprintf("attempt %d: an earlier attempt was started", info.Attempt))
		}
		if a.Ledger != nil {
			worker := a.Worker
			if worker == "" {
				host, _ := os.Hostname()
				worker = fmt.Sprintf("%d@%s", os.Getpid(), host)
			}
			if prev, err := a.Ledger.Start(key, worker); err != nil {
				if prev != nil {
					return nil, notRepeated(key, s.Tool, fmt.Sprintf("started at %s by %s", prev.Started.Format(time.RFC3339Nano), prev.Worker))
				}
				// Without the record we cannot promise "at most once".
				return nil, temporal.NewNonRetryableApplicationError("ledger: "+err.Error()+": fix the ledger directory (chains.ledger_dir), then re-run", ErrTypeToolFailure, nil)
			}
		}
	}

	every := a.HeartbeatEvery
	if every <= 0 {
		every = time.Second
		if hb := info.HeartbeatTimeout; hb > 0 && hb/3 < every {
			every = hb / 3
		}
	}
	stopHB := make(chan struct{})
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx, key)
			select {
			case <-stopHB:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	cctx := ctx
	if !cr.Deadline.IsZero() {
		// The chain's deadline: the pipeline answers it with the call's
		// timeout, as in chains.Run (the activity's own timeout is later).
		var cancel context.CancelFunc
		cctx, cancel = context.WithDeadline(ctx, cr.Deadline)
		defer cancel()
	}
	out, tr, err := p.Call(cctx, cr.Run.RunID, cr.Step, cr.Item, cr.Outputs)
	close(stopHB)
	<-hbDone
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled by the workflow (a stop) or timed out: Temporal
			// reports that itself.
			return nil, ctx.Err()
		}
		f := CallFailure{Outcome: chains.OutcomeOf(err), Kind: pipeline.KindOf(err), Message: err.Error(), Trace: tr}
		var se *chains.StepError
		if errors.As(err, &se) && se.Err != nil {
			f.Message = se.Err.Error()
		}
		if f.Trace.Node == "" {
			f.Trace = chains.NodeTrace{Node: nodeName(s.ID, cr.Item), Step: s.ID, Item: cr.Item, Tool: s.Tool, CallID: key,
				Start: time.Now(), End: time.Now(), Outcome: f.Outcome, Error: f.Message}
		}
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeToolFailure, nil, f)
	}
	if a.Ledger != nil && !s.Idempotent {
		if err := a.Ledger.Finish(key); err != nil {
			activity.GetLogger(ctx).Warn("ledger: could not record the end of a call", "key", key, "error", err)
		}
	}
	return &CallResult{Output: out, Trace: tr}, nil
}

func notRepeated(key, tool, why string) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("call %s of non-idempotent tool %s not repeated (%s): it may have taken effect; check, then re-run by hand", key, tool, why),
		ErrTypeNotRepeated, nil)
}
