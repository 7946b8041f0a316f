package builtin

import (
	"slices"
	"strings"
	"testing"
)

// TestGlobAlternatives: {a,b} is either, groups nest, a one-item group is
// its item, a [...] class keeps its braces, and what cannot match or
// would explode is refused.
func TestGlobAlternatives(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"*.pdf", []string{"*.pdf"}},
		{"*.{csv,xlsx}", []string{"*.csv", "*.xlsx"}},
		{"{a,b{1,2}}.txt", []string{"a.txt", "b1.txt", "b2.txt"}},
		{"{report}.pdf", []string{"report.pdf"}},
		{"[{]x", []string{"[{]x"}},
		{"r/{2024,2025}/*.{pdf,md}", []string{"r/2024/*.pdf", "r/2024/*.md", "r/2025/*.pdf", "r/2025/*.md"}},
	} {
		g, err := compileGlob(c.pattern)
		if err != nil || !slices.Equal([]string(g), c.want) {
			t.Errorf("compileGlob(%q) = %q, %v; want %q", c.pattern, g, err, c.want)
		}
	}
	g, _ := compileGlob("*.{csv,xlsx,ods}")
	for name, want := range map[string]bool{"sales.csv": true, "budget.xlsx": true, "plan.ods": true, "notes.txt": false, "csv": false} {
		if g.Match(name) != want {
			t.Errorf("*.{csv,xlsx,ods} matches %q: %v, want %v", name, !want, want)
		}
	}
	for _, bad := range []string{"*.{csv", "[a-", "{" + strings.Repeat("a,", 70) + "b}", "{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}"} {
		if _, err := compileGlob(bad); err == nil {
			t.Errorf("compileGlob(%q) accepted", bad)
		}
	}
}

// TestListFilesEitherType: a pattern with {a,b} lists the files of
// either type, through the tool, and a broken group is the caller's error.
func TestListFilesEitherType(t *testing.T) {
	_, spaces := fixture(t)
	lf := testTools(t, spaces)["list-files"]
	out, err := invoke(t, lf, "alice", map[string]any{"space": "documents", "pattern": "*.{pdf,md}", "recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range decode[listResult](t, out).Files {
		names = append(names, f.Path)
	}
	want := []string{"b.pdf", "notes.md", "papers/deep/y.pdf", "papers/x.pdf"}
	if !slices.Equal(names, want) {
		t.Fatalf("listed %v, want %v", names, want)
	}
	if _, err := invoke(t, lf, "alice", map[string]any{"space": "documents", "pattern": "*.{pdf"}); err == nil || !strings.Contains(err.Error(), "not a valid glob") {
		t.Fatalf("an unclosed group: %v", err)
	}
}
