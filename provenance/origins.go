package provenance

import (
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
	all    Set // the labels of every text still kept
}

type shown struct {
	text   string
	labels Set
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
	for _, t := range texts {
		if len(t) < MinValue {
			continue
		}
		if len(t) > o.budget {
			t = t[:o.budget]
		}
		o.texts = append(o.texts, shown{t, labels})
		o.bytes += len(t)
	}
	drop := 0
	for o.bytes > o.budget && drop < len(o.texts) {
		o.bytes -= len(o.texts[drop].text)
		drop++
	}
	if drop > 0 {
		o.texts = append(o.texts[:0], o.texts[drop:]...)
	}
	o.all = nil
	for _, s := range o.texts {
		o.all = o.all.Union(s.labels)
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
	for _, s := range o.texts {
		if strings.Contains(s.text, value) || (len(s.text) >= MinText && strings.Contains(value, s.text)) {
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
