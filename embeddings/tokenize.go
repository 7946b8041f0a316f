package embeddings

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into lower-case word tokens the way tool registries are
// written: identifiers are broken on camelCase, snake_case, kebab-case and
// dots ("getUserInfo" → get user info, "HTMLParser" → html parser,
// "country_info.capital" → country info capital), digits form their own
// tokens, and each Han/Kana/Hangul character is a token of its own (so the
// character n-grams of the lexical embedder see CJK bigrams). Stop words are
// kept; see Terms for the analysed form.
func Tokens(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = appendIdentifier(out, cur)
			cur = cur[:0]
		}
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flush()
			out = append(out, string(unicode.ToLower(r)))
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		case r == '\'' || r == '’':
			// "user's" → "user", "don't" → "don" + "t" (t is a stop word).
			flush()
		default:
			flush()
		}
	}
	flush()
	return out
}

// appendIdentifier appends to out the parts of one run of letters and
// digits, split on case changes and letter/digit boundaries and
// lower-cased.
func appendIdentifier(out []string, rs []rune) []string {
	start := 0
	for i := 1; i < len(rs); i++ {
		prev, r := rs[i-1], rs[i]
		cut := false
		switch {
		case unicode.IsDigit(prev) != unicode.IsDigit(r):
			cut = true
		case unicode.IsLower(prev) && unicode.IsUpper(r):
			cut = true // getUser
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			cut = true // HTMLParser: cut before P
		}
		if cut {
			out = append(out, strings.ToLower(string(rs[start:i])))
			start = i
		}
	}
	return append(out, strings.ToLower(string(rs[start:])))
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// Terms is the analysed form used for matching: Tokens without stop words,
// each reduced by Stem.
func Terms(text string) []string {
	toks := Tokens(text)
	out := toks[:0]
	for _, t := range toks {
		if stopwords[t] {
			continue
		}
		out = append(out, Stem(t))
	}
	return out
}

// Stem is a light English suffix stripper (plural, -ing, -ed, -ly, -ies,
// -ation…): conservative so that it rarely merges unrelated words, which
// matters more for short tool descriptions than aggressive conflation.
// Words shorter than four letters and non-ASCII words are returned as is.
func Stem(w string) string {
	n := len(w)
	if n < 4 || utf8.RuneCountInString(w) != n {
		return w
	}
	for _, s := range []struct{ suf, rep string }{
		{"ational", "ate"}, {"ization", "ize"}, {"isation", "ize"}, {"ations", "ate"},
		{"ation", "ate"}, {"fulness", "ful"}, {"iveness", "ive"}, {"ousness", "ous"},
		{"nesses", ""}, {"ness", ""}, {"ments", "ment"}, {"ities", "ity"},
		{"ically", "ic"}, {"ingly", ""}, {"edly", ""},
	} {
		if strings.HasSuffix(w, s.suf) && n-len(s.suf) >= 3 {
			return fixStem(w[:n-len(s.suf)] + s.rep)
		}
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 4:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "zes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is"):
		return w
	case strings.HasSuffix(w, "s") && n > 4:
		w = w[:n-1]
		n--
	}
	switch {
	case strings.HasSuffix(w, "ing") && n-3 >= 3 && hasVowel(w[:n-3]):
		return fixStem(w[:n-3])
	case strings.HasSuffix(w, "ed") && n-2 >= 3 && hasVowel(w[:n-2]):
		return fixStem(w[:n-2])
	case strings.HasSuffix(w, "ly") && n-2 >= 4:
		return w[:n-2]
	}
	return w
}

// fixStem undoes doubled final consonants ("runn" → "run") and restores a
// final e after a consonant-vowel-consonant ending where the stripped word
// most likely had one ("creat" → "create", "us" stays).
func fixStem(s string) string {
	n := len(s)
	if n >= 3 && s[n-1] == s[n-2] && !isVowel(s[n-1]) && s[n-1] != 'l' && s[n-1] != 's' && s[n-1] != 'z' {
		return s[:n-1]
	}
	if n >= 4 && (strings.HasSuffix(s, "at") || strings.HasSuffix(s, "iz") || strings.HasSuffix(s, "bl") || strings.HasSuffix(s, "ag")) {
		return s + "e"
	}
	return s
}

func isVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

func hasVowel(s string) bool {
	for i := 0; i < len(s); i++ {
		if isVowel(s[i]) {
			return true
		}
	}
	return false
}

// stopwords are English function words plus the request boilerplate that
// carries no signal about which tool fits ("please", "help", "want").
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be
because been before being below between both but by can could did do does doing down during each
few for from further had has have having he her here hers herself him himself his how i if in into
is it its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such t than that the their theirs them themselves
then there these they this those through to too under until up very was we were what when where
which while who whom why will with would you your yours yourself yourselves s d ll m re ve don
also please pls kindly help want wanted need needs would let lets tell give show know
get got use using used provide provides provided able etc e g eg ie via may might must shall
i'd i'm i'll it's im id ive`) {
		m[w] = true
	}
	return m
}()
