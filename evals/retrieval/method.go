package retrieval

import (
	"context"
	"runtime"
	"sync"
)

// EvaluateMethod scores one method on one dataset and also returns each
// query's top 10, in the order of ds.Queries: what a comparison of two
// backends of the same method needs (store/pg's parity test).
func EvaluateMethod(ctx context.Context, ds Dataset, m Method) (Result, [][]string, error) {
	ranked := make([][]string, len(ds.Queries))
	errs := make([]error, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for w := range errs {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(ds.Queries); i += len(errs) {
				r, err := m.Rank(ctx, ds.Queries[i].Text, 10)
				if err != nil {
					errs[w] = err
					return
				}
				ranked[i] = r
			}
		}(w)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return Result{}, nil, err
		}
	}
	var acc accumulator
	for i, q := range ds.Queries {
		acc.add(ranked[i], q.Gold)
	}
	return newResult(ds.Name, m.Name(), acc.result()), ranked, nil
}
