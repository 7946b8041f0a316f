package understand

import (
	"strings"
)

// partSplit cuts a request into parts at the words that order tasks.
var partSplit = MustPattern(`(?i)\s*(?:[,;]\s*)?\b(?:and\s+then|then|after\s+that|afterwards|and\s+finally|finally)\b[\s,]*|\s*;\s*|[.!?]\s+`)

// SplitParts cuts a request into the parts a plan gives a step each (at
// sentences, and at "then", "after that", "finally"), dropping empty ones.
func SplitParts(request string) []string {
	var out []string
	for _, p := range partSplit.Split(request, -1) {
		if p = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(p), ".!?,")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NamedFiles are the file names the request writes (report.pdf, notes/a.md),
// outside quotes and outside a text given to work on, each once, in order.
func (in *Interpretation) NamedFiles() []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range in.Objects {
		if o.Named && !seen[o.Phrase] {
			seen[o.Phrase] = true
			out = append(out, o.Phrase)
		}
	}
	return out
}
