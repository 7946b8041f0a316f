package selector

import (
	"strings"
	"sync"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

var reSpaces = understand.MustPattern(`\s+`)

// Delexicalize replaces the values a request carries — quoted strings, file
// names, arithmetic expressions, numbers — by the names of their types
// ("text", "pdf file", "arithmetic expression", "number"), which are the
// words tool descriptions use for them. What a request asks for is in its
// other words; a long quoted text to summarize, or the digits of a sum,
// say nothing about which tool fits, and left in they swamp the words
// that do (a request's similarity to a tool would fall with the length of
// its argument).
func Delexicalize(text string) string { return delexicalize(text, func() {}) }

// delexicalize is Delexicalize calling yield between its passes over the
// text (a long request's are long: heavy work gives way there).
func delexicalize(text string, yield func()) string {
	s := reQuoted.ReplaceAllStringFunc(text, func(m string) string {
		// reQuoted also takes the character before the quote.
		lead := ""
		if r := m[0]; r != '\'' && r != '"' && !strings.HasPrefix(m, "“") {
			lead = string(r)
		}
		return lead + " text "
	})
	yield()
	s = reFile.ReplaceAllStringFunc(s, func(m string) string {
		ext := m[strings.LastIndexByte(m, '.')+1:]
		return " " + strings.ToLower(ext) + " file "
	})
	yield()
	s = reExpr.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Trim(m, "0123456789-. ") == "" {
			return m // a date or an id, not arithmetic: the number rule below
		}
		return " arithmetic expression "
	})
	yield()
	s = reNumber.ReplaceAllStringFunc(s, func(m string) string {
		lead := ""
		if m != "" && !strings.ContainsRune("-$0123456789", rune(m[0])) {
			lead = m[:1]
		}
		if strings.HasSuffix(m, "%") {
			return lead + " number percent "
		}
		return lead + " number "
	})
	yield()
	return strings.TrimSpace(reSpaces.ReplaceAllString(s, " "))
}

// Coverage is the fraction of a request's content words (analysed as the
// index analyses them: stop words dropped, stemmed; values delexicalized)
// that the tool's own text uses — its name, description, parameter names
// and descriptions. Unlike a cosine it does not fall with the length of
// the tool's description: a short request whose every word the tool's
// text uses covers it fully, however much more the description says; and
// a request about flights, jokes or the weather covers no tool, whatever
// character n-grams its words share with one. A request with no content
// word (only values) has coverage 0.
func Coverage(request string, t pipeline.Tool) float64 {
	return coverageOf(coverageTerms(request), t)
}

// coverageTerms are a request's distinct content words as Coverage reads
// them: found once per request, then matched against each candidate.
func coverageTerms(request string) []string { return coverageTermsYielding(request, func() {}) }

// coverageTermsYielding is coverageTerms calling yield between its steps.
func coverageTermsYielding(request string, yield func()) []string {
	// The answer's format ("as JSON") is no word of the task.
	d := delexicalize(understand.WithoutFormat(request), yield)
	yield()
	q := embeddings.Terms(d)
	out := q[:0]
	seen := make(map[string]bool, len(q))
	for _, w := range q {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// coverageOf is Coverage of the request's words q (coverageTerms).
func coverageOf(q []string, t pipeline.Tool) float64 {
	if len(q) == 0 {
		return 0
	}
	doc := toolTerms(t)
	hit := 0
	for _, w := range q {
		if doc[w] || sharesStem(w, doc) {
			hit++
		}
	}
	return float64(hit) / float64(len(q))
}

// toolTerms are the analysed words of a tool's text, as the index makes it.
func toolTerms(t pipeline.Tool) map[string]bool {
	k := keyOf(t)
	termsCache.RLock()
	m, ok := termsCache.m[k]
	termsCache.RUnlock()
	if ok {
		return m
	}
	m = toolTermsOf(t)
	termsCache.Lock()
	if len(termsCache.m) > maxCachedTools {
		clear(termsCache.m)
	}
	termsCache.m[k] = m
	termsCache.Unlock()
	return m
}

// termsCache holds each tool text's analysed words (read-only once
// stored): Coverage runs for every candidate of every request.
var termsCache = struct {
	sync.RWMutex
	m map[toolKey]map[string]bool
}{m: map[toolKey]map[string]bool{}}

func toolTermsOf(t pipeline.Tool) map[string]bool {
	d := Docs([]Entry{{Tool: t}})[0]
	out := map[string]bool{}
	for _, w := range embeddings.Terms(d.Name + " " + d.Text()) {
		out[w] = true
	}
	return out
}

// sharesStem matches derived forms the light stemmer leaves apart
// ("calculate" and "calculator", "summary" and "summarize"): a common
// prefix of at least six letters and three quarters of the shorter word.
func sharesStem(w string, doc map[string]bool) bool {
	if len(w) < 6 {
		return false
	}
	for d := range doc {
		if len(d) < 6 || d[:3] != w[:3] {
			continue
		}
		n := 0
		for n < len(w) && n < len(d) && w[n] == d[n] {
			n++
		}
		if n >= 6 && 4*n >= 3*min(len(w), len(d)) {
			return true
		}
	}
	return false
}

// usesFile reports whether some top-level argument is a file the request
// names (as its interpretation read it).
func usesFile(args map[string]any, in *understand.Interpretation) bool {
	for _, o := range in.Objects {
		if !o.Named {
			continue
		}
		for _, v := range args {
			if s, ok := v.(string); ok && s == o.Phrase {
				return true
			}
		}
	}
	return false
}
