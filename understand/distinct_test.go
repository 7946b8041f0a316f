package understand

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOneFileThroughTwoSpaces: the working folder is the home and its
// Documents is a space too; a file there is one file, named through the
// space closest to it, never a choice between itself and itself.
func TestOneFileThroughTwoSpaces(t *testing.T) {
	home := t.TempDir()
	docs := filepath.Join(home, "Documents")
	for _, f := range []string{"meeting-notes.md", "quotes/acme-2024.pdf", "quotes/acme-2025.pdf"} {
		p := filepath.Join(docs, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ix := NewFileIndex()
	if err := ix.Build("cwd", home); err != nil {
		t.Fatal(err)
	}
	if err := ix.Build("documents", docs); err != nil {
		t.Fatal(err)
	}
	env := Env{Spaces: []string{"cwd", "documents"}, Index: ix}
	for _, c := range []struct{ text, want string }{
		{"what does meeting-notes.md say", "meeting-notes.md"},
		{"what do my meeting notes say", "meeting-notes.md"},
		{"read the 2024 acme quote", "quotes/acme-2024.pdf"},
	} {
		in := Parse(c.text, env)
		if len(in.Objects) == 0 {
			t.Errorf("%q: no object", c.text)
			continue
		}
		ms := in.Objects[0].Matches
		if len(ms) != 1 || ms[0].Space != "documents" || ms[0].Path != c.want {
			var got []string
			for _, m := range ms {
				got = append(got, m.Space+":"+m.Path)
			}
			t.Errorf("%q: matches %v, want documents:%s alone", c.text, got, c.want)
		}
	}
	// Two different files stay two.
	in := Parse("compare the two acme quotes", env)
	n := 0
	for _, o := range in.Objects {
		n += len(o.Matches)
	}
	if n != 2 {
		t.Errorf("the two acme quotes: %d matches over %d objects, want the 2 files", n, len(in.Objects))
	}
}
