// Command testworker is one AIRS replica for the Temporal end-to-end test:
// a Temporal worker whose activities call the slow counting tools of
// internal/testtools through a real pipeline.Manager. The test starts it,
// kills it with SIGKILL mid-chain and starts another.
//
//	testworker -address 127.0.0.1:7233 -queue airs-e2e -dir /tmp/counts -ledger /tmp/ledger
package main

import (
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"

	"go.temporal.io/sdk/worker"

	"github.com/airs-dev/airs/chains/temporal"
	"github.com/airs-dev/airs/chains/temporal/internal/testtools"
)

func main() {
	address := flag.String("address", os.Getenv("AIRS_TEMPORAL_ADDRESS"), "Temporal frontend host:port (default $AIRS_TEMPORAL_ADDRESS)")
	namespace := flag.String("namespace", "default", "Temporal namespace")
	queue := flag.String("queue", "airs", "task queue")
	dir := flag.String("dir", "", "directory for the tools' count files (required)")
	ledger := flag.String("ledger", "", "directory for the non-idempotent call ledger (required; shared by replicas)")
	flag.Parse()
	if *address == "" || *dir == "" || *ledger == "" {
		log.Fatal("testworker: -address (or AIRS_TEMPORAL_ADDRESS), -dir and -ledger are required; see -help")
	}
	m, cat, err := testtools.New(*dir)
	if err != nil {
		log.Fatal(err)
	}
	led, err := temporal.OpenLedger(*ledger)
	if err != nil {
		log.Fatal(err)
	}
	c, err := temporal.Dial(*address, *namespace, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w, err := temporal.NewWorker(c, *queue, &temporal.Activities{Executor: m, Catalog: cat, Ledger: led, Worker: fmt.Sprintf("testworker-%d", os.Getpid())})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")
	<-worker.InterruptCh()
	w.Stop()
}
