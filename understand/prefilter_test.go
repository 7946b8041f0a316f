package understand

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// everydayRequests are the requests of the everyday suites (in the
// repository, not the shared data).
func everydayRequests(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"../evals/everyday/testdata/dev.jsonl", "../evals/everyday/testdata/heldout.jsonl"} {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c struct {
				Q string `json:"q"`
			}
			if json.Unmarshal(sc.Bytes(), &c) == nil && c.Q != "" {
				out = append(out, c.Q)
			}
		}
		fh.Close()
	}
	if len(out) < 100 {
		t.Fatalf("%d requests read", len(out))
	}
	return out
}

// variants of a request that a case-insensitive pattern matches alike:
// upper case, title case, and the two non-ASCII runes that fold to ASCII
// letters (the Kelvin sign, the long s) in place of k and s.
func variants(s string) []string {
	title := []byte(s)
	for i := range title {
		if (i == 0 || title[i-1] == ' ') && title[i] >= 'a' && title[i] <= 'z' {
			title[i] -= 'a' - 'A'
		}
	}
	return []string{s, strings.ToUpper(s), string(title),
		strings.NewReplacer("k", "\u212A", "s", "\u017F").Replace(s),
		strings.NewReplacer("K", "\u212A", "S", "\u017F").Replace(strings.ToUpper(s))}
}

// TestPrefilterNeverRejectsAMatch: for every pattern this package reads
// requests with, a text the pattern matches is never one its prefilter
// says cannot match, over the everyday suites' requests, their case
// variants, and the same requests joined into long texts.
func TestPrefilterNeverRejectsAMatch(t *testing.T) {
	reqs := everydayRequests(t)
	env := Env{Spaces: []string{"documents", "papers", "quotes", "K-files", "ſtuff"}}
	var texts []string
	for _, q := range reqs {
		texts = append(texts, variants(q)...)
		Parse(q, env) // compiles the patterns built from spaces' names
	}
	texts = append(texts, strings.Join(reqs, " "), strings.Join(reqs, ". "), strings.Join(reqs, "\n"))
	ps := []Pattern{reOperand, reCalcSpan, reArithCue, reNameSplit, reUnitAfterNumber, reAmount, partSplit, reDigit, reWord,
		reServiceVerb, reSides, reFolderRef, reDefinite, reBody, reTLDR, reFile, reQuoted, reWordRE, reEvery, reTypeW,
		reRecur, reNounBefore, reNeg, reWhen, reCurrency}
	for _, r := range rewrites {
		ps = append(ps, r.re)
	}
	for _, a := range actionPhrases {
		ps = append(ps, a.re)
	}
	patterns.Range(func(_, v any) bool { ps = append(ps, v.(Pattern)); return true })
	filtering, matched := 0, 0
	for _, p := range ps {
		if len(p.pre) > 0 {
			filtering++
		}
		for _, s := range texts {
			if p.Regexp.MatchString(s) {
				matched++
				if !p.May(s) {
					t.Errorf("%s matches %q, its prefilter %v says it cannot", p, s, p.pre)
				}
			}
		}
	}
	if filtering < len(ps)/2 || matched == 0 {
		t.Errorf("%d of %d patterns have a prefilter, %d matches seen: the test checks too little", filtering, len(ps), matched)
	}
}

// TestPrefilterRejects: a text without what a pattern needs is said to
// hold no match, without running it; case-insensitive literals are
// found whatever their case.
func TestPrefilterRejects(t *testing.T) {
	for _, c := range []struct {
		expr, text string
		may        bool
	}{
		{`(?i)\bsquare\s+root\s+of\s+(\d+)`, "read the file and compare two texts", false},
		{`(?i)\bsquare\s+root\s+of\s+(\d+)`, "SQUARE ROOT OF 9", true},
		{`(?i)\bsquare\s+root\s+of\s+(\d+)`, "square root of nine", false}, // no digit
		{`(?i)\bma\s+(?:sum|total)`, "MA \u017FUM", true},                  // the long s folds to s
		{`(?i)\bma\s+(?:sum|total)`, "ma tally", false},
		{`\.(?:pdf|txt)\b`, "report.PDF", false}, // case-sensitive literal
		{`\.(?:pdf|txt)\b`, "report.txt", true},
		{`(?:a|b*)c`, "c", true}, // an alternative that needs nothing: no filter
	} {
		p := MustPattern(c.expr)
		if got := p.May(c.text); got != c.may {
			t.Errorf("%s on %q: may %v, want %v (prefilter %v)", c.expr, c.text, got, c.may, p.pre)
		}
		if p.Regexp.MatchString(c.text) && !p.May(c.text) {
			t.Errorf("%s matches %q but its prefilter rejects it", c.expr, c.text)
		}
	}
}

// TestMatchesIsFindAll: the lazy iteration yields what FindAllStringIndex
// finds, in order, and stops when asked.
func TestMatchesIsFindAll(t *testing.T) {
	re := MustPattern(`(?i)\bdelete\b|x*`).Regexp
	for _, s := range []string{"", "delete", "a delete b delete c", strings.Repeat("delete x ", 40), "xx yy"} {
		want := re.FindAllStringIndex(s, -1)
		var got [][]int
		for loc := range matches(re, s) {
			got = append(got, loc)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d matches, FindAll %d", s, len(got), len(want))
		}
		for i := range got {
			if got[i][0] != want[i][0] || got[i][1] != want[i][1] {
				t.Errorf("%q: match %d %v, FindAll %v", s, i, got[i], want[i])
			}
		}
		n := 0
		for range matches(re, s) {
			n++
			if n == 3 {
				break
			}
		}
		if n != min(3, len(want)) {
			t.Errorf("%q: stopped after %d", s, n)
		}
	}
}
