package pipeline

import (
	"cmp"
	"slices"
	"time"
)

// rank orders the candidates for a name, best first:
//
//  1. the caller's explicit (preferred) provider;
//  2. higher trust level (TL3 system before TL0 community);
//  3. lower historical p50 latency — compared by histogram bucket (a factor
//     of 2), so noise does not decide; a provider with no history ranks
//     after those with one at the same trust, since nothing is known of it;
//  4. lower error rate (failed / finished calls; none yet counts as 0);
//  5. earlier registration.
//
// The order is total (registration order is unique), so the choice is
// deterministic.
func rank(cands []*entry, preferred string) {
	if len(cands) < 2 {
		return
	}
	type key struct {
		e    *entry
		p50  time.Duration
		errs float64
	}
	keys := make([]key, len(cands))
	for i, e := range cands {
		p := e.stats.latency.p50()
		if p == 0 {
			p = 1<<63 - 1
		}
		keys[i] = key{e, p, e.stats.errorRate()}
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
			cmp.Compare(a.p50, b.p50),
			cmp.Compare(a.errs, b.errs),
			cmp.Compare(a.e.order, b.e.order),
		)
	})
	for i := range keys {
		cands[i] = keys[i].e
	}
}
