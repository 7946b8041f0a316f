package provenance

import (
	"slices"
	"strings"
	"sync"
)

// A value is matched to what a caller was shown by where it occurs: a
// value found inside a text it was shown came from that text, and a text
// found whole inside a value went into it (a file's content sent as a
// body). Short strings occur everywhere by chance, so each direction has a
// floor: a value shorter than MinValue is never matched, a text shorter
// than MinText is never looked for inside a value.
const (
	MinValue = 4
	MinText  = 16
)

// Origins remembers the texts one caller has been shown (the string values
// of tool outputs), each with its labels, within a byte budget (the oldest
// texts go first). It is safe for concurrent use.
type Origins struct {
	mu     sync.Mutex
	budget int
	bytes  int
	texts  []shown
	all    Set           // the labels of every text still kept
	count  map[Label]int // how many kept texts carry each label: all, counted
}

type shown struct {
	text   string
	labels Set
	// grams is a Bloom filter of the text's 8-byte windows (long texts
	// only): a value whose first window is not in it does not occur in the
	// text, so most lookups skip the scan. It never says no wrongly.
	grams []uint64
}

// gramsFrom is the length from which a text gets a filter.
const gramsFrom = 4 << 10

func window(s string, i int) uint64 {
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func gramBits(w uint64, n uint64) (uint64, uint64) {
	h := w * 0x9E3779B97F4A7C15
	return (h >> 7) & (n - 1), (h >> 37) & (n - 1)
}

func newGrams(t string) []uint64 {
	n := uint64(1024)
	for n < uint64(len(t))*4 {
		n <<= 1
	}
	g := make([]uint64, n/64)
	for i := 0; i+8 <= len(t); i++ {
		a, b := gramBits(window(t, i), n)
		g[a/64] |= 1 << (a % 64)
		g[b/64] |= 1 << (b % 64)
	}
	return g
}

// mayContain is false only when t cannot contain v (len(v) >= 8).
func (s *shown) mayContain(v string) bool {
	if s.grams == nil || len(v) < 8 {
		return true
	}
	a, b := gramBits(window(v, 0), uint64(len(s.grams))*64)
	return s.grams[a/64]&(1<<(a%64)) != 0 && s.grams[b/64]&(1<<(b%64)) != 0
}

// NewOrigins keeps up to budget bytes of text (at least 1 KiB).
func NewOrigins(budget int) *Origins {
	return &Origins{budget: max(budget, 1<<10)}
}

// Observe records texts the caller was shown, all with the same labels. A
// text longer than the budget keeps its head.
func (o *Origins) Observe(texts []string, labels Set) {
	if len(labels) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	changed := false
	for _, t := range texts {
		if len(t) < MinValue {
			continue
		}
		if len(t) > o.budget {
			t = t[:o.budget]
		}
		sh := shown{text: t, labels: labels}
		if len(t) >= gramsFrom {
			sh.grams = newGrams(t)
		}
		o.texts = append(o.texts, sh)
		o.bytes += len(t)
		changed = o.countLabels(labels, 1) || changed
	}
	drop := 0
	for o.bytes > o.budget && drop < len(o.texts) {
		o.bytes -= len(o.texts[drop].text)
		changed = o.countLabels(o.texts[drop].labels, -1) || changed
		drop++
	}
	if drop > 0 {
		o.texts = append(o.texts[:0], o.texts[drop:]...)
	}
	// The union of the kept texts' labels changes only when a label is
	// first or last carried: a caller's history can hold tens of thousands
	// of small texts, and each observation must not cost a pass over them.
	if changed {
		var all Set
		for l := range o.count {
			all = append(all, l)
		}
		slices.SortFunc(all, compare)
		o.all = all
	}
}

// countLabels adds d to the count of each label; true when a label came to
// be carried or stopped being carried by any kept text.
func (o *Origins) countLabels(labels Set, d int) bool {
	if o.count == nil {
		o.count = map[Label]int{}
	}
	changed := false
	for _, l := range labels {
		n := o.count[l] + d
		if n <= 0 {
			delete(o.count, l)
			changed = true
		} else {
			changed = changed || n == d
			o.count[l] = n
		}
	}
	return changed
}

// Find is the union of the labels of every kept text the value occurs in,
// or that occurs whole in the value; nil when none does.
func (o *Origins) Find(value string) Set {
	value = strings.TrimSpace(value)
	if len(value) < MinValue {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	var out Set
	for i := range o.texts {
		s := &o.texts[i]
		if (s.mayContain(value) && strings.Contains(s.text, value)) || (len(s.text) >= MinText && len(s.text) <= len(value) && strings.Contains(value, s.text)) {
			out = out.Union(s.labels)
		}
	}
	return out
}

// All is the union of the labels of every kept text: what a model that was
// shown them all may have drawn on.
func (o *Origins) All() Set {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all
}

// InWords reports whether a value appears in the user's own words,
// ignoring case and a URL's scheme and trailing slash ("example.org/a" in
// the words covers "https://example.org/a/"). The whole value must appear:
// a file's base name in the words does not vouch for a path in another
// folder.
func InWords(value, words string) bool {
	v := normalize(value)
	if v == "" || words == "" {
		return false
	}
	return strings.Contains(strings.ToLower(words), v)
}

func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, p := range [...]string{"https://", "http://"} {
		if t, ok := strings.CutPrefix(s, p); ok {
			s = t
			break
		}
	}
	return strings.TrimSuffix(s, "/")
}
