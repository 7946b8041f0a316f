package engine

import (
	"github.com/airs-dev/airs/chains/temporal"
)

// ChainActivities is this replica's side of chains on Temporal: the
// activities run each call through this engine's pipeline and catalog,
// exactly as an in-process chain does (RunPipeline).
func (e *Engine) ChainActivities(ledger *temporal.Ledger) *temporal.Activities {
	return &temporal.Activities{Executor: e.Executor(), Catalog: e.toolCatalog(), Ledger: ledger}
}
