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
