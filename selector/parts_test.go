package selector

import (
	"strings"
	"testing"
)

// A request is cut at the words that order tasks, and only there: "and"
// between two objects, a file name's dot, "then" inside a word stay.
func TestSplitParts(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"find the PDFs, then summarize the newest", "find the PDFs|summarize the newest"},
		{"compare a.pdf and b.pdf and then summarize the differences", "compare a.pdf and b.pdf|summarize the differences"},
		{"list the files; read notes.txt", "list the files|read notes.txt"},
		{"Extract report.pdf. After that, summarize it. Finally count the words.", "Extract report.pdf|summarize it|count the words"},
		{"what is 2+3", "what is 2+3"},
		{"read the authentication notes then", "read the authentication notes"},
		{"compare a.pdf and b.pdf", "compare a.pdf and b.pdf"},
		{"then", ""},
	} {
		if got := strings.Join(SplitParts(c.in), "|"); got != c.want {
			t.Errorf("SplitParts(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
