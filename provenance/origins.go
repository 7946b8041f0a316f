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
//
// A caller's history can hold tens of thousands of small texts, most of
// them the same few (a file read again and again): what an observation or
// a lookup costs must not grow with every copy. So each distinct text is
// kept once for lookups, with the labels of its copies counted, and the
// union of all labels is kept counted too.
type Origins struct {
	mu       sync.Mutex
	budget   int
	bytes    int
	texts    []shown              // each text as it was shown, oldest first: what the budget drops
	distinct map[string]*distinct // each text still kept, once: what Find scans
	all      Set                  // the labels of every text still kept
	count    labelCounts          // all, counted
}

// shown is one text as it was shown, with its labels.
type shown struct {
	text   string
	labels Set
}

// distinct is one text still kept, however many times it was shown.
type distinct struct {
	copies int
	count  labelCounts // the labels of its copies, counted
	labels Set         // the same, as a set
	// grams is a Bloom filter of the text's 8-byte windows (long texts
	// only): a value whose first window is not in it does not occur in the
	// text, so most lookups skip the scan. It never says no wrongly.
	grams []uint64
}

// labelCounts counts, per label, the texts that carry it.
type labelCounts map[Label]int

// add adds d to the count of each label; true when a label came to be
// counted or stopped being counted.
func (c labelCounts) add(labels Set, d int) bool {
	changed := false
	for _, l := range labels {
		n := c[l] + d
		if n <= 0 {
			delete(c, l)
			changed = true
		} else {
			changed = changed || n == d
			c[l] = n
		}
	}
	return changed
}

// set is the labels counted, sorted: a Set (nil when none).
func (c labelCounts) set() Set {
	var s Set
	for l := range c {
		s = append(s, l)
	}
	slices.SortFunc(s, compare)
	return s
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
func (d *distinct) mayContain(v string) bool {
	if d.grams == nil || len(v) < 8 {
		return true
	}
	a, b := gramBits(window(v, 0), uint64(len(d.grams))*64)
	return d.grams[a/64]&(1<<(a%64)) != 0 && d.grams[b/64]&(1<<(b%64)) != 0
}

// NewOrigins keeps up to budget bytes of text (at least 1 KiB).
func NewOrigins(budget int) *Origins {
	return &Origins{budget: max(budget, 1<<10), distinct: map[string]*distinct{}, count: labelCounts{}}
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
		o.texts = append(o.texts, shown{text: t, labels: labels})
		o.bytes += len(t)
		changed = o.count.add(labels, 1) || changed
		d := o.distinct[t]
		if d == nil {
			d = &distinct{count: labelCounts{}}
			if len(t) >= gramsFrom {
				d.grams = newGrams(t)
			}
			o.distinct[t] = d
		}
		d.copies++
		if d.count.add(labels, 1) {
			d.labels = d.count.set()
		}
	}
	drop := 0
	for o.bytes > o.budget && drop < len(o.texts) {
		sh := o.texts[drop]
		o.bytes -= len(sh.text)
		changed = o.count.add(sh.labels, -1) || changed
		d := o.distinct[sh.text]
		if d.copies--; d.copies == 0 {
			delete(o.distinct, sh.text)
		} else if d.count.add(sh.labels, -1) {
			d.labels = d.count.set()
		}
		drop++
	}
	if drop > 0 {
		o.texts = append(o.texts[:0], o.texts[drop:]...)
	}
	if changed {
		o.all = o.count.set()
	}
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
	for text, d := range o.distinct {
		if (d.mayContain(value) && strings.Contains(text, value)) || (len(text) >= MinText && len(text) <= len(value) && strings.Contains(value, text)) {
			out = out.Union(d.labels)
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
