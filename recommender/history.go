package recommender

import (
	"encoding/json"
	"math"
	"sort"
	"strings"
	"time"
)

// History is a sequence model of calls: P(next call | the previous calls),
// an interpolated trigram → bigram → unigram model (Witten–Bell smoothing:
// a context that has been followed by many different calls trusts its own
// counts less) whose counts decay exponentially with age, so that what the
// user does now outweighs what they did months ago, and a context not seen
// for a long time gives way to the shorter ones.
//
// Memory is bounded: at most MaxContexts contexts (the ones with the
// smallest decayed count go first) and MaxFollowers next calls per context.
// Not safe for concurrent use.
type History struct {
	// HalfLife is the age at which an observation counts half.
	HalfLife time.Duration
	// MaxContexts bounds the number of contexts kept (default 20,000).
	MaxContexts int
	// MaxFollowers bounds the next calls kept per context (default 64; the
	// unigram keeps up to 4,096 tools).
	MaxFollowers int

	ctx map[string]*hctx
}

// hctx is one context's counts, all in the frame of time t: the decayed
// count at time now is the stored one × 2^(−(now−t)/HalfLife).
type hctx struct {
	total float64
	t     int64 // unix nanoseconds of the counts' frame
	next  map[string]float64
}

// NewHistory returns an empty History whose observations lose half their
// weight every halfLife (≤ 0: no decay).
func NewHistory(halfLife time.Duration) *History {
	return &History{HalfLife: halfLife, MaxContexts: 20000, MaxFollowers: 64, ctx: map[string]*hctx{}}
}

const ctxSep = "\x1f"

// unigramKey is the key of the empty context.
const unigramKey = "\x00"

// contexts returns the keys of the bigram and trigram contexts of prev
// ("" when prev is too short).
func contexts(prev []string) (bi, tri string) {
	n := len(prev)
	if n >= 1 {
		bi = prev[n-1]
	}
	if n >= 2 {
		tri = prev[n-2] + ctxSep + prev[n-1]
	}
	return bi, tri
}

func (h *History) decay(from, to int64) float64 {
	if h.HalfLife <= 0 || to <= from {
		return 1
	}
	return math.Exp2(-float64(to-from) / float64(h.HalfLife))
}

func (h *History) maxFollowers(key string) int {
	if key == unigramKey {
		return 4096 // the unigram: every tool
	}
	if h.MaxFollowers <= 0 {
		return 64
	}
	return h.MaxFollowers
}

// Observe records that next was called after prev (the calls before it,
// oldest first) at time at.
func (h *History) Observe(prev []string, next string, at time.Time) {
	if h.ctx == nil {
		h.ctx = map[string]*hctx{}
	}
	now := at.UnixNano()
	bi, tri := contexts(prev)
	h.add(unigramKey, next, now)
	if len(prev) >= 1 {
		h.add(bi, next, now)
	}
	if len(prev) >= 2 {
		h.add(tri, next, now)
	}
	if max := h.MaxContexts; max > 0 && len(h.ctx) > max {
		h.prune(now, max)
	}
}

func (h *History) add(key, next string, now int64) {
	c := h.ctx[key]
	if c == nil {
		c = &hctx{t: now, next: map[string]float64{}}
		h.ctx[key] = c
	}
	// Counts are kept in the frame of time c.t: an observation at now counts
	// 2^((now−c.t)/HalfLife), so that Observe is O(1) however many
	// followers the context has; when that factor grows large the context
	// is rebased to now.
	inc := 1.0
	if h.HalfLife > 0 && now != c.t {
		inc = math.Exp2(float64(now-c.t) / float64(h.HalfLife))
		if inc > 1<<40 {
			d := 1 / inc
			c.total *= d
			for k, v := range c.next {
				c.next[k] = v * d
			}
			c.t, inc = now, 1
		}
	}
	c.next[next] += inc
	c.total += inc
	if max := h.maxFollowers(key); len(c.next) > max {
		low, lv := "", math.Inf(1)
		for k, v := range c.next {
			if k != next && (v < lv || v == lv && k < low) {
				low, lv = k, v
			}
		}
		c.total -= lv
		delete(c.next, low)
	}
}

// prune keeps the max·9/10 contexts with the largest decayed counts (the
// unigram always stays).
func (h *History) prune(now int64, max int) {
	type kv struct {
		k string
		v float64
	}
	all := make([]kv, 0, len(h.ctx))
	for k, c := range h.ctx {
		if k == unigramKey {
			continue
		}
		all = append(all, kv{k, c.total * h.decay(c.t, now)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].v != all[j].v {
			return all[i].v > all[j].v
		}
		return all[i].k < all[j].k
	})
	keep := max * 9 / 10
	for _, e := range all[min(keep, len(all)):] {
		delete(h.ctx, e.k)
	}
}

// Len is the number of contexts kept.
func (h *History) Len() int { return len(h.ctx) }

// Scores returns P(tool | prev) at time now for every tool the model has
// seen follow the contexts of prev: interpolated Witten–Bell,
// P(w|h) = (c(h,w) + u(h)·P(w|h′)) / (c(h) + u(h)), where h′ is h without
// its oldest call, u(h) the number of distinct calls seen after h and the
// counts are decayed to now. Values are in [0,1] and sum to at most 1.
func (h *History) Scores(prev []string, now time.Time) map[string]float64 {
	out := map[string]float64{}
	h.AddScores(prev, now, out)
	return out
}

// AddScores is Scores into a map the caller owns (cleared first), for a
// caller that scores often and reuses the map.
func (h *History) AddScores(prev []string, now time.Time, out map[string]float64) {
	clear(out)
	t := now.UnixNano()
	uni := h.ctx[unigramKey]
	if uni == nil || uni.total <= 0 {
		return
	}
	// The interpolation unrolled: P = λ₃P₃ + (1−λ₃)(λ₂P₂ + (1−λ₂)P₁),
	// coefficients first so that every tool is written once.
	bi, tri := contexts(prev)
	var lv [3]*hctx // unigram, bigram, trigram
	var coef [3]float64
	lv[0], coef[0] = uni, 1
	if len(prev) >= 1 {
		lv[1] = h.ctx[bi]
	}
	if len(prev) >= 2 && lv[1] != nil {
		lv[2] = h.ctx[tri]
	}
	for l := 1; l < 3; l++ {
		c := lv[l]
		if c == nil || c.total <= 0 {
			break
		}
		n, u := c.total*h.decay(c.t, t), float64(len(c.next))
		lam := n / (n + u) // weight of this level's own counts
		for k := 0; k < l; k++ {
			coef[k] *= 1 - lam
		}
		coef[l] = lam
	}
	for l, c := range lv {
		if c == nil || coef[l] == 0 {
			continue
		}
		a := coef[l] / c.total // the decay cancels in count / total
		for k, v := range c.next {
			if l == 0 {
				out[k] = a * v
			} else {
				out[k] += a * v
			}
		}
	}
}

type historyJSON struct {
	HalfLife     time.Duration       `json:"half_life"`
	MaxContexts  int                 `json:"max_contexts"`
	MaxFollowers int                 `json:"max_followers"`
	Contexts     map[string]hctxJSON `json:"contexts"`
}

type hctxJSON struct {
	Total float64            `json:"total"`
	T     int64              `json:"t"`
	Next  map[string]float64 `json:"next"`
}

// MarshalJSON writes the parameters and every context's counts (contexts
// keyed by their calls joined with "→"; the unigram is "").
func (h *History) MarshalJSON() ([]byte, error) {
	j := historyJSON{HalfLife: h.HalfLife, MaxContexts: h.MaxContexts, MaxFollowers: h.MaxFollowers, Contexts: map[string]hctxJSON{}}
	for k, c := range h.ctx {
		name := strings.ReplaceAll(k, ctxSep, "→")
		if k == unigramKey {
			name = ""
		}
		j.Contexts[name] = hctxJSON{c.total, c.t, c.next}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (h *History) UnmarshalJSON(b []byte) error {
	var j historyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	g := NewHistory(j.HalfLife)
	if j.MaxContexts > 0 {
		g.MaxContexts = j.MaxContexts
	}
	if j.MaxFollowers > 0 {
		g.MaxFollowers = j.MaxFollowers
	}
	for name, c := range j.Contexts {
		k := strings.ReplaceAll(name, "→", ctxSep)
		if name == "" {
			k = unigramKey
		}
		next := c.Next
		if next == nil {
			next = map[string]float64{}
		}
		g.ctx[k] = &hctx{total: c.Total, t: c.T, next: next}
	}
	*h = *g
	return nil
}
