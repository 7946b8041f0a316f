package pipeline

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histBuckets is the number of latency buckets. Bucket i counts durations in
// (2^(i-1) µs, 2^i µs]; bucket 0 is ≤ 1 µs and the last one is unbounded.
// Powers of two make Observe a single bits.Len64 — no search, no lock — which
// matters because every call of every tool lands here; 31 buckets span 1 µs to
// ~18 minutes, past the 600 s maximum budget, at a resolution (×2) that is
// enough to rank providers and to plot p50/p99.
const histBuckets = 32

// Histogram is a lock-free latency histogram with power-of-two buckets.
type Histogram struct {
	buckets [histBuckets]atomic.Uint64
	count   atomic.Uint64
	sumNs   atomic.Uint64
}

func bucketOf(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	us := (uint64(d) + 999) / 1000
	i := bits.Len64(us - 1)
	if i >= histBuckets {
		i = histBuckets - 1
	}
	return i
}

// BucketBound is the upper bound of bucket i (the last bucket has none: it
// returns a negative duration).
func BucketBound(i int) time.Duration {
	if i >= histBuckets-1 {
		return -1
	}
	return time.Duration(uint64(1)<<uint(i)) * time.Microsecond
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	h.buckets[bucketOf(d)].Add(1)
	h.count.Add(1)
	if d > 0 {
		h.sumNs.Add(uint64(d))
	}
}

// HistogramSnapshot is a copy of a Histogram at one moment.
type HistogramSnapshot struct {
	Buckets [histBuckets]uint64 // per bucket, not cumulative
	Count   uint64
	Sum     time.Duration
}

// Snapshot copies the counters. Buckets are read one by one, so under load
// Count may differ slightly from the buckets' sum; quantiles use the buckets.
func (h *Histogram) Snapshot() HistogramSnapshot {
	var s HistogramSnapshot
	for i := range h.buckets {
		s.Buckets[i] = h.buckets[i].Load()
	}
	s.Count = h.count.Load()
	s.Sum = time.Duration(h.sumNs.Load())
	return s
}

// Quantile returns the upper bound of the bucket that holds quantile q
// (0<q≤1), or 0 when nothing was observed. The answer is exact to the bucket
// (a factor of 2), which is what ranking and dashboards need.
func (s *HistogramSnapshot) Quantile(q float64) time.Duration {
	var total uint64
	for _, c := range s.Buckets {
		total += c
	}
	if total == 0 {
		return 0
	}
	rank := uint64(q*float64(total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range s.Buckets {
		seen += c
		if seen >= rank {
			if b := BucketBound(i); b > 0 {
				return b
			}
			return BucketBound(histBuckets-2) * 2
		}
	}
	return BucketBound(histBuckets-2) * 2
}

// p50 is the quick median used by provider ranking; 0 means "no history".
func (h *Histogram) p50() time.Duration {
	if h.count.Load() == 0 {
		return 0
	}
	s := h.Snapshot()
	return s.Quantile(0.5)
}
