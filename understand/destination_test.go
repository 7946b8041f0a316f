package understand

import (
	"slices"
	"testing"
)

// TestDestinations: a file named as where something goes is not an
// object to read; a file named as what to work on stays one.
func TestDestinations(t *testing.T) {
	for _, c := range []struct {
		q          string
		dest, objs []string
	}{
		{"make a new file called todo.txt with buy milk", []string{"todo.txt"}, nil},
		{"create notes.md", []string{"notes.md"}, nil},
		{"save the summary of papers/bm25.pdf as bm25-summary.md", []string{"bm25-summary.md"}, []string{"papers/bm25.pdf"}},
		{"summarize report.pdf and write it to notes.md", []string{"notes.md"}, []string{"report.pdf"}},
		{"export budget.csv to report.pdf", []string{"report.pdf"}, []string{"budget.csv"}},
		{"write a summary of the text in notes.txt", nil, []string{"notes.txt"}},
		{"make a summary of report.md", nil, []string{"report.md"}},
		{"compare a.txt to b.txt", nil, []string{"a.txt", "b.txt"}},
		{"read todo.txt", nil, []string{"todo.txt"}},
	} {
		in := Parse(c.q, Env{})
		if !slices.Equal(in.Destination, c.dest) || !slices.Equal(in.NamedFiles(), c.objs) {
			t.Errorf("%q: destination %q, objects %q; want %q, %q", c.q, in.Destination, in.NamedFiles(), c.dest, c.objs)
		}
	}
}
