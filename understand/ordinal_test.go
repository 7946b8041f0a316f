package understand

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// one is the path of the one file a request's single object names, or
// what it names instead.
func one(in *Interpretation) string {
	if len(in.Objects) != 1 || in.Objects[0].Resolved() == nil {
		var ps []string
		for _, o := range in.Objects {
			ps = append(ps, strings.Join(paths(o.Matches), ","))
		}
		return "objects " + strings.Join(ps, " | ")
	}
	return in.Objects[0].Resolved().Path
}

// TestOrdinalPicksOneFile: an ordinal over the files a request names picks
// one — by name order, or by the date a name carries for newest/oldest —
// and says how it chose; without an ordinal the same words stay several.
func TestOrdinalPicksOneFile(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	cases := map[string]string{
		"summarize the first paper":                  "papers/attention.pdf",
		"read the second paper":                      "papers/bm25.pdf",
		"read the last paper":                        "papers/bm25.pdf",
		"open the newest lease":                      "contracts/lease-2024.txt",
		"open the oldest lease":                      "contracts/lease-2023.txt",
		"summarize the latest acme quote":            "quotes/acme-2025.pdf",
		"extract the first pdf in the quotes folder": "quotes/acme-2024.pdf",
		"read the last pdf in the papers folder":     "papers/bm25.pdf",
	}
	for q, want := range cases {
		in := Parse(q, env)
		if got := one(in); got != want {
			t.Errorf("%q → %s, want %s", q, got, want)
			continue
		}
		if in.Ordinal == nil || !strings.Contains(in.Objects[0].Chose, "that fit, by") {
			t.Errorf("%q: chose %s without saying how (%q)", q, want, in.Objects[0].Chose)
		}
	}
	if in := Parse("read the paper", env); len(in.Objects) != 1 || len(in.Objects[0].Matches) != 2 || in.Ordinal != nil {
		t.Errorf("no ordinal: both papers are choices, got %s", one(in))
	}
	if in := Parse("read the fifth paper", env); in.Ordinal != nil {
		t.Errorf("an ordinal past the files' count chooses nothing, got %s", one(in))
	}
}

// TestOrdinalByTimeWithoutDates: "the newest" among names that carry no
// date is by modification time.
func TestOrdinalByTimeWithoutDates(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	for i, f := range []string{"notes/b-ideas.md", "notes/a-plans.md", "notes/c-list.md"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old.Add(time.Duration(i)*time.Hour), old.Add(time.Duration(i)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	x := NewFileIndex()
	if err := x.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	env := Env{Spaces: []string{"documents"}, Index: x}
	for q, want := range map[string]string{
		"read the newest file in the notes folder": "notes/c-list.md",
		"read the oldest file in the notes folder": "notes/b-ideas.md",
		"read the first file in the notes folder":  "notes/a-plans.md",
	} {
		if got := one(Parse(q, env)); got != want {
			t.Errorf("%q → %s, want %s", q, got, want)
		}
	}
}

// TestTypedListingIsRecursive: a listing of a kind of file looks under the
// whole folder; a plain listing is the folder's own.
func TestTypedListingIsRecursive(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	for q, rec := range map[string]bool{
		"list the pdfs in my documents":        true,
		"list all markdown files in documents": true,
		"list my documents":                    false,
		"what files are in documents":          false,
	} {
		in := Parse(q, env)
		if !in.Has(List) || in.Recursive != rec {
			t.Errorf("%q: actions %v recursive %v, want a listing recursive=%v", q, in.Actions, in.Recursive, rec)
		}
	}
}

// TestQuestionAboutDocumentReadsIt: a question about what a named document
// says reads it, even when its words look like arithmetic ("how much is");
// a question naming no document stays what it was.
func TestQuestionAboutDocumentReadsIt(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	for q, want := range map[string]string{
		"what does the 2025 quote cost for the pro plan":  "quotes/acme-2025.pdf",
		"how much is the pro plan in the 2024 acme quote": "quotes/acme-2024.pdf",
		"what's the monthly rent in the 2024 lease":       "contracts/lease-2024.txt",
		"in the 2025 quote, what does the pro plan cost":  "quotes/acme-2025.pdf",
	} {
		in := Parse(q, env)
		if in.Main() != Read || !in.Question || one(in) != want {
			t.Errorf("%q: actions %v question %v → %s, want a reading of %s", q, in.Actions, in.Question, one(in), want)
		}
	}
	if in := Parse("how much is 12 plus 30", env); in.Main() != Calculate {
		t.Errorf("arithmetic stays arithmetic: %v", in.Actions)
	}
	if in := Parse("what is the capital of France", env); in.Question || len(in.Actions) > 0 {
		t.Errorf("a question naming no document reads nothing: %v", in.Actions)
	}
}

// TestQuestionNamesItsFileByFewWords: the file a question names is named
// by the words that name it, not by the whole question (a choice among
// several files replaces those words).
func TestQuestionNamesItsFileByFewWords(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	for q, want := range map[string]string{
		"what does the quote cost for enterprise":   "the quote",
		"what's the monthly rent in the 2024 lease": "the 2024 lease",
	} {
		in := Parse(q, env)
		if len(in.Objects) != 1 || in.Objects[0].Phrase != want {
			t.Errorf("%q: objects %+v, want one named %q", q, in.Objects, want)
		}
	}
}

// TestTwoOrdinalsPickTwoFiles: "compare the first and the last paper"
// names two files of one kind, each by its ordinal.
func TestTwoOrdinalsPickTwoFiles(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	cases := map[string][2]string{
		"compare the first and the last paper":      {"papers/attention.pdf", "papers/bm25.pdf"},
		"compare the oldest and the newest lease":   {"contracts/lease-2023.txt", "contracts/lease-2024.txt"},
		"diff the newest lease with the oldest one": {"contracts/lease-2024.txt", "contracts/lease-2023.txt"},
	}
	for q, want := range cases {
		in := Parse(q, env)
		if !in.Has(Compare) || len(in.Objects) != 2 {
			t.Errorf("%q: actions %v, %d objects, want compare of two files", q, in.Actions, len(in.Objects))
			continue
		}
		for i, o := range in.Objects {
			if e := o.Resolved(); e == nil || e.Path != want[i] || o.Chose == "" {
				t.Errorf("%q: file %d is %v (chose %q), want %s", q, i+1, e, o.Chose, want[i])
			}
		}
	}
	// One ordinal with compare keeps its single pick; the same file twice is no comparison.
	if in := Parse("compare the first and the first paper", env); len(in.Objects) == 2 && in.Objects[0].Resolved() == in.Objects[1].Resolved() {
		t.Errorf("the same file twice is not two files to compare")
	}
}

// TestTwoOrdinalsEachGetTheCall: "summarize the first and the last paper"
// is two files, each summarized.
func TestTwoOrdinalsEachGetTheCall(t *testing.T) {
	x, _ := fixture(t)
	in := Parse("summarize the first and the last paper", Env{Spaces: []string{"documents"}, Index: x})
	if len(in.Objects) != 2 || !in.All {
		t.Fatalf("want two files, each summarized; got %d objects, all %v", len(in.Objects), in.All)
	}
	for i, want := range []string{"papers/attention.pdf", "papers/bm25.pdf"} {
		if e := in.Objects[i].Resolved(); e == nil || e.Path != want {
			t.Errorf("file %d is %v, want %s", i+1, e, want)
		}
	}
}
