package pipeline

import (
	"context"
	"errors"
	"fmt"
)

// Warmer is implemented by a Handler whose first call pays a start cost
// (an index to build, a model to load, a process to spawn). Warm pays it
// ahead of time so that a caller with affinity for the tool does not; it
// must be safe to call more than once (keep-alive calls it again) and
// concurrently with Invoke.
type Warmer interface {
	Warm(ctx context.Context) error
}

// Warm calls Warm on the handler of every provider of tool name (highest
// version each) that implements Warmer, and reports how many it warmed.
// A handler without a start cost is skipped, not an error; the errors of
// those that fail are joined so that one failing provider does not hide
// another.
func (r *Registry) Warm(ctx context.Context, name string) (int, error) {
	var hs []Handler
	for _, e := range r.candidates(name, "") {
		hs = append(hs, e.handler)
	}
	var errs []error
	n := 0
	for _, h := range hs {
		w, ok := h.(Warmer)
		if !ok {
			continue
		}
		if err := w.Warm(ctx); err != nil {
			errs = append(errs, fmt.Errorf("warm %s: %w", name, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
