package pipeline

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// rank orders the candidates for a name, best first:
//
//  1. the caller's explicit (preferred) provider;
//  2. higher trust level (TL3 system before TL0 community);
//  3. lower predicted latency for this call (latency.go: the provider's
//     load, in-flight calls, runtime and p50 with the call's payload),
//     compared at a resolution of 2^¼ so noise does not decide — when the
//     model predicts for every candidate; otherwise lower historical p50
//     latency, compared by histogram bucket (a factor of 2); a provider
//     with no history ranks after those with one at the same trust, since
//     nothing is known of it;
//  4. lower error rate (failed / finished calls; none yet counts as 0);
//  5. earlier registration.
//
// The order is total (registration order is unique), so the choice is
// deterministic.
//
// Ranking only orders: lookup still skips a dead, retired or open-circuit
// candidate whatever its prediction. lat may be nil (no prediction).
func rank(cands []*entry, preferred string, lat *latencyPredictor, payload int) {
	if len(cands) < 2 {
		return
	}
	type key struct {
		e    *entry
		pred int // 4·log2 of the predicted latency; 0 for all when not every candidate has one
		p50  time.Duration
		errs float64
	}
	keys := make([]key, len(cands))
	for i, e := range cands {
		p := e.stats.latency.p50()
		if p == 0 {
			p = 1<<63 - 1
		}
		keys[i] = key{e: e, p50: p, errs: e.stats.errorRate()}
	}
	if lat != nil {
		now := time.Now()
		all := true
		for i := range keys {
			x, ok := lat.features(keys[i].e, payload, now)
			var d time.Duration
			if ok {
				d, _, _, ok = lat.predict(keys[i].e, &x)
			}
			if !ok || d <= 0 {
				all = false
				break
			}
			keys[i].pred = int(math.Floor(4 * math.Log2(float64(d))))
		}
		if !all {
			for i := range keys {
				keys[i].pred = 0
			}
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		ap, bp := a.e.prov.id == preferred, b.e.prov.id == preferred
		if ap != bp {
			if ap {
				return -1
			}
			return 1
		}
		return cmp.Or(
			-cmp.Compare(a.e.tool.Trust, b.e.tool.Trust),
			cmp.Compare(a.pred, b.pred),
			cmp.Compare(a.p50, b.p50),
			cmp.Compare(a.errs, b.errs),
			cmp.Compare(a.e.order, b.e.order),
		)
	})
	for i := range keys {
		cands[i] = keys[i].e
	}
}
