package understand

import (
	"regexp"
	"sync"
)

// regexps caches the patterns built from a request's vocabulary (a
// space's name, a file type's words): compiled once, not per request.
var regexps sync.Map // pattern → *regexp.Regexp

// CachedRegexp is regexp.MustCompile, once per pattern.
func CachedRegexp(pattern string) *regexp.Regexp {
	if re, ok := regexps.Load(pattern); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(pattern)
	regexps.Store(pattern, re)
	return re
}

// plain caches Parse(text, Env{}) by text: the engine's guards, the
// recommender and no-LLM selection read the same request's interpretation
// without spaces several times per turn, and it is the same every time.
var plain struct {
	sync.Mutex
	m map[string]*Interpretation
}

// maxPlain bounds the cache; past it, it starts afresh.
const maxPlain = 4096

// maxPlainText is the longest text the cache above keeps; longer ones (up
// to maxLongText) are kept in a ring of the last few: a selection or plan
// over a long text reads it several times too, and a long text is where
// reading again costs most.
const (
	maxPlainText = 4096
	maxLongText  = 64 << 10
	longKept     = 8
)

// ParsePlain is Parse(text, Env{}) (no spaces, no files: what the request
// says, not what it names on disk), cached by text. The interpretation is
// shared: read it, do not change it.
func ParsePlain(text string) *Interpretation { return ParsePlainYielding(text, nil) }

// ParsePlainYielding is ParsePlain whose reading of a text not cached
// calls yield between its steps (Env.Yield).
func ParsePlainYielding(text string, yield func()) *Interpretation {
	if len(text) > maxPlainText {
		return parseLong(text, yield)
	}
	plain.Lock()
	in, ok := plain.m[text]
	plain.Unlock()
	if ok {
		return in
	}
	in = Parse(text, Env{Yield: yield})
	plain.Lock()
	if plain.m == nil || len(plain.m) >= maxPlain {
		plain.m = map[string]*Interpretation{}
	}
	plain.m[text] = in
	plain.Unlock()
	return in
}

var long struct {
	sync.Mutex
	ring [longKept]struct {
		text string
		in   *Interpretation
	}
	next int
}

func parseLong(text string, yield func()) *Interpretation {
	if len(text) > maxLongText {
		return Parse(text, Env{Yield: yield})
	}
	long.Lock()
	for _, e := range long.ring {
		if e.in != nil && e.text == text {
			long.Unlock()
			return e.in
		}
	}
	long.Unlock()
	in := Parse(text, Env{Yield: yield})
	long.Lock()
	long.ring[long.next].text, long.ring[long.next].in = text, in
	long.next = (long.next + 1) % longKept
	long.Unlock()
	return in
}

var patterns sync.Map // pattern → Pattern

// cachedPattern is MustPattern, once per pattern.
func cachedPattern(expr string) Pattern {
	if p, ok := patterns.Load(expr); ok {
		return p.(Pattern)
	}
	p := MustPattern(expr)
	patterns.Store(expr, p)
	return p
}
