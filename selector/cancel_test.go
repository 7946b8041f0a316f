package selector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// leavingRetriever is fixedRetriever whose requester leaves (cancel) at
// its after-th retrieval; it counts the retrievals, the unit of work.
type leavingRetriever struct {
	fixedRetriever
	after  int32
	cancel context.CancelFunc
	n      atomic.Int32
}

func (l *leavingRetriever) Retrieve(ctx context.Context, q string, k int, allowed []string) ([]Retrieved, error) {
	if l.n.Add(1) == l.after {
		l.cancel()
	}
	return l.fixedRetriever.Retrieve(ctx, q, k, allowed)
}

// A request whose client left ends its work at the next part: planning a
// request of many parts (a retrieval each) stops once the context is done,
// and answers the context's error, not a plan.
func TestWorkEndsWhenTheRequesterLeaves(t *testing.T) {
	calc := pipeline.Tool{Name: "calculator", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`)}
	parts := strings.Repeat("compute 1+2 then ", 40) + "compute 3+4"
	for _, what := range []string{"plan", "select"} {
		ctx, cancel := context.WithCancel(context.Background())
		r := &leavingRetriever{fixedRetriever: fixedRetriever{{Name: "calculator", Semantic: 2, Dense: 0.9}}, after: 2, cancel: cancel}
		s := &Selector{Catalog: listCatalog{{Provider: "p", Tool: calc}}, Ranker: orderRanker{}, Validate: validate, Retriever: r}
		var err error
		var got any
		if what == "plan" {
			got, err = s.Plan(ctx, "u", parts, nil)
		} else {
			// The first retrieval is the selection's own; the requester
			// leaves during it.
			r.after = 1
			got, err = s.Select(ctx, "u", parts)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, %+v; want context.Canceled", what, err, got)
		}
		if n := r.n.Load(); n > r.after+1 {
			t.Errorf("%s: %d retrievals after the requester left at the %d-th", what, n, r.after)
		}
		cancel()
	}
}
