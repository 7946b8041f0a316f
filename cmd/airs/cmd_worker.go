package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/airs-dev/airs/chains/temporal"
)

var workerCmd = &command{
	Name:    "worker",
	Summary: "run chains from Temporal through this replica's pipeline (chains.engine: temporal)",
	Usage: `Usage:
  airs worker [--address HOST:PORT] [--namespace NS] [--task-queue Q]

Polls Temporal's task queue for chain runs (started by 'airs run' when
airs.yaml has chains: {engine: temporal}) and runs each call through this
replica's pipeline: capability checks, schema, audit as for any call. Run one
on every replica: when a worker dies mid-chain another takes the chain over;
finished steps are not run again, an idempotent call that was cut off is
retried, a non-idempotent one is reported and never repeated
(docs/scaling.md, "Chains on Temporal"). The defaults come from the chains:
section of airs.yaml. Ctrl-C stops the worker.

Examples:
  airs worker
  airs worker --address 127.0.0.1:7233 --task-queue airs
`,
	Run: func(a *app, args []string) error {
		fs := a.flags()
		address := fs.String("address", "", "Temporal frontend host:port (default: chains.address, 127.0.0.1:7233)")
		namespace := fs.String("namespace", "", "Temporal namespace (default: chains.namespace, default)")
		queue := fs.String("task-queue", "", "task queue to poll (default: chains.task_queue, airs)")
		pos, err := parseArgs(fs, args)
		if err != nil {
			return err
		}
		cfg, err := a.config()
		if err != nil {
			return err
		}
		cc := cfg.Chains
		for _, f := range []struct {
			v *string
			d string
		}{{address, cc.Address}, {namespace, cc.Namespace}, {queue, cc.TaskQueue}} {
			if *f.v == "" {
				*f.v = f.d
			}
		}
		if len(pos) != 0 {
			return usagef("'worker' takes no arguments")
		}
		ledger, err := temporal.OpenLedger(cc.LedgerDir)
		if err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(a.context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		e, closeE, err := a.build(ctx, engineSpec{Channel: "worker", Model: "none"})
		if err != nil {
			return err
		}
		defer closeE()
		c, err := temporal.Dial(*address, *namespace, nil)
		if err != nil {
			return err
		}
		defer c.Close()
		w, err := temporal.NewWorker(c, *queue, e.ChainActivities(ledger))
		if err != nil {
			return err
		}
		if err := w.Start(); err != nil {
			return fmt.Errorf("worker: %v: check that %s serves namespace %s", err, *address, *namespace)
		}
		fmt.Fprintf(a.stderr, "airs worker: polling task queue %s on %s (namespace %s); Ctrl-C stops\n", *queue, *address, *namespace)
		<-ctx.Done()
		w.Stop()
		return nil
	},
}
