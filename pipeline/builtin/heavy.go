package builtin

import (
	"context"

	"github.com/airs-dev/airs/internal/turns"
)

// heavyInput is the input, in bytes, past which a built-in's run is heavy
// work: a compare of two long texts or the extraction of a large PDF
// keeps a core busy for long, as a selection over a long request does.
const heavyInput = 64 << 10

// heavy marks the work of ctx heavy when its input of n bytes makes it so
// (internal/turns): its checkpoints (stopped) give way to light requests,
// and its CPU is charged to the request that asked for it when the caller
// charges (turns.WithCharge, as `airs serve` does). done must be called on
// the goroutine that called heavy.
func heavy(ctx context.Context, n int) (context.Context, func()) {
	if n <= heavyInput {
		return ctx, func() {}
	}
	return turns.Heavy(ctx)
}

// stopped is a checkpoint of a long run: it gives way to light work when
// the run is heavy, and answers ctx's error once ctx has ended.
func stopped(ctx context.Context) error {
	turns.Yield(ctx)
	return ctx.Err()
}
