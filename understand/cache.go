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

func cachedRegexp(pattern string) *regexp.Regexp { return CachedRegexp(pattern) }

// plain caches Parse(text, Env{}) by text: the engine's guards, the
// recommender and no-LLM selection read the same request's interpretation
// without spaces several times per turn, and it is the same every time.
var plain struct {
	sync.Mutex
	m map[string]*Interpretation
}

// maxPlain bounds the cache; past it, it starts afresh.
const maxPlain = 4096

// maxPlainText is the longest text cached: a long one is read once anyway
// and would only hold memory.
const maxPlainText = 4096

// ParsePlain is Parse(text, Env{}) (no spaces, no files: what the request
// says, not what it names on disk), cached by text. The interpretation is
// shared: read it, do not change it.
func ParsePlain(text string) *Interpretation {
	if len(text) > maxPlainText {
		return Parse(text, Env{})
	}
	plain.Lock()
	in, ok := plain.m[text]
	plain.Unlock()
	if ok {
		return in
	}
	in = Parse(text, Env{})
	plain.Lock()
	if plain.m == nil || len(plain.m) >= maxPlain {
		plain.m = map[string]*Interpretation{}
	}
	plain.m[text] = in
	plain.Unlock()
	return in
}
