package understand

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airs-dev/airs/pipeline/builtin"
)

// TestExpression: arithmetic as people say it becomes an expression the
// calculator evaluates to what they meant; requests with no arithmetic
// (a date, an id, a year) give none.
func TestExpression(t *testing.T) {
	cases := map[string]float64{
		"sum 12 and 30":                       42,
		"what's 12% of 350":                   42,
		"square root of 1764":                 42,
		"subtract 15 from 60":                 45,
		"multiply 6 by 7":                     42,
		"what is 84 divided by 2":             42,
		"9 squared":                           81,
		"2 to the power of 10":                1024,
		"the average of 10, 20 and 30":        20,
		"what's twenty plus twenty two":       42,
		"three hundred and twelve minus 270":  42,
		"what is 2 * (3 + 4)":                 14,
		"take 8 away from 50":                 42,
		"half of 84":                          42,
		"12 x 4":                              48,
		"add 19 to 23":                        42,
		"what is 1,000 minus 958":             42,
		"what's 1500 plus 20 percent":         1800,
		"80 minus 15%":                        68,
		"50 plus 10% of 200":                  70,
		"how much is a 20% tip on 86 dollars": 17.2,
		"what's 15% tax on $40":               6,
		"an 8% commission on 2,500":           200,
		"20% off $85":                         68,
		"what is 12% of $350":                 42,
	}
	for q, want := range cases {
		e := Expression(q)
		v, err := builtin.Eval(e)
		if err != nil || v != want {
			t.Errorf("%q → %q = %v (%v), want %v", q, e, v, err, want)
		}
	}
	for _, q := range []string{"what happened on 2024-01-05", "read report-2025.md", "tell me a joke", "order 66", "the 3 acme quotes"} {
		if e := Expression(q); e != "" {
			t.Errorf("%q has no arithmetic, got %q", q, e)
		}
	}
}

func fixture(t *testing.T) (*FileIndex, string) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "meeting-notes.md", "draft.txt", "final.txt",
		"papers/attention.pdf", "papers/bm25.pdf", "contracts/lease-2023.txt", "contracts/lease-2024.txt", ".hidden/secret.txt"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := NewFileIndex()
	if err := x.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	return x, dir
}

func paths(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Space+":"+e.Path)
	}
	return out
}

// TestParse: one reading of a request gives its action, the explicit
// destructive ask (never for a question or a negation), the files it
// names resolved — loosely named ones too, several equally good ones all
// returned — and the space it names or the usual folder that is none.
func TestParse(t *testing.T) {
	x, _ := fixture(t)
	env := Env{Spaces: []string{"documents"}, Index: x}
	type want struct {
		main        Action
		destructive bool
		files       [][]string // per object, its matches
		space       string
		missing     string
	}
	cases := map[string]want{
		"what does final.txt in documents say":               {main: Read, files: [][]string{{"documents:final.txt"}}, space: "documents"},
		"extract the text of the 2024 acme quote":            {main: Extract, files: [][]string{{"documents:quotes/acme-2024.pdf"}}},
		"read the meeting notes":                             {main: Read, files: [][]string{{"documents:meeting-notes.md"}}},
		"compare the two acme quotes":                        {main: Compare, files: [][]string{{"documents:quotes/acme-2024.pdf"}, {"documents:quotes/acme-2025.pdf"}}},
		"compare the draft and the final version":            {main: Compare, files: [][]string{{"documents:draft.txt"}, {"documents:final.txt"}}},
		"read the lease":                                     {main: Read, files: [][]string{{"documents:contracts/lease-2023.txt", "documents:contracts/lease-2024.txt"}}},
		"delete draft.txt":                                   {main: Delete, destructive: true, files: [][]string{{"documents:draft.txt"}}},
		"get rid of the draft":                               {main: Delete, destructive: true, files: [][]string{{"documents:draft.txt"}}},
		"don't delete anything, just read final.txt":         {main: Read, files: [][]string{{"documents:final.txt"}}},
		"read draft.txt before I delete it":                  {main: Read, files: [][]string{{"documents:draft.txt"}}},
		"I'm about to delete the draft, show it to me first": {main: Read, files: [][]string{{"documents:draft.txt"}}},
		"I'll delete draft.txt later, read it now":           {main: Read, files: [][]string{{"documents:draft.txt"}}},
		"I want to delete draft.txt":                         {main: Delete, destructive: true, files: [][]string{{"documents:draft.txt"}}},
		"what is the attention paper about":                  {main: Summarize, files: [][]string{{"documents:papers/attention.pdf"}}},
		"list the files in my downloads folder":              {main: List, missing: "downloads"},
		"open a github issue in acme/api":                    {main: Read},
	}
	for q, w := range cases {
		in := Parse(q, env)
		if in.Main() != w.main || in.ExplicitDestructive != w.destructive || in.Space != w.space || in.MissingSpace != w.missing {
			t.Errorf("%q: main %q destructive %v space %q missing %q; want %+v", q, in.Main(), in.ExplicitDestructive, in.Space, in.MissingSpace, w)
		}
		var got [][]string
		for _, o := range in.Files() {
			got = append(got, paths(o.Matches))
		}
		if !slices.EqualFunc(got, w.files, slices.Equal) {
			t.Errorf("%q: files %v, want %v", q, got, w.files)
		}
	}
	in := Parse("summarize this: the bus was late again. I missed the meeting with acme.", env)
	if in.Body != "the bus was late again. I missed the meeting with acme." || len(in.Objects) != 0 || in.Main() != Summarize {
		t.Errorf("summarize this: body %q objects %d main %q", in.Body, len(in.Objects), in.Main())
	}
	in = Parse("summarize every paper in the papers folder", env)
	if !in.Every || in.Folder == nil || in.Folder.Resolved() == nil || in.Folder.Resolved().Path != "papers" {
		t.Errorf("every paper in the papers folder: every %v folder %+v", in.Every, in.Folder)
	}
}

// TestFileIndexIncremental: Add and Remove keep the index current
// without a walk; hidden files are not indexed; a removed folder takes
// its files with it.
func TestFileIndexIncremental(t *testing.T) {
	x, _ := fixture(t)
	if x.Has("documents", "secret.txt") {
		t.Error("a hidden folder's file was indexed")
	}
	if x.Has("documents", "budget-2026.csv") {
		t.Fatal("a file that does not exist is indexed")
	}
	x.Add("documents", "finance/budget-2026.csv", false)
	if got := paths(x.Search([]string{"documents"}, []string{"budget", "2026"}, "", false)); !slices.Equal(got, []string{"documents:finance/budget-2026.csv"}) {
		t.Errorf("after Add: %v", got)
	}
	if !x.Has("documents", "budget-2026.csv") {
		t.Error("Has does not find an added file by its base name")
	}
	x.Remove("documents", "quotes")
	if x.Has("documents", "acme-2024.pdf") || x.Len("documents") != 10 {
		t.Errorf("after removing the folder: has acme %v, %d entries", x.Has("documents", "acme-2024.pdf"), x.Len("documents"))
	}
	if got := x.Search([]string{"documents"}, []string{"acme"}, "", false); len(got) != 0 {
		t.Errorf("removed files still found: %v", paths(got))
	}
	// A file added after removals takes a freed place: it is found by its
	// own words, and the removed ones are still not.
	x.Add("documents", "quotes/globex-2026.pdf", false)
	if got := paths(x.Search([]string{"documents"}, []string{"globex"}, "", false)); !slices.Equal(got, []string{"documents:quotes/globex-2026.pdf"}) {
		t.Errorf("after re-adding: %v", got)
	}
	if got := paths(x.Search([]string{"documents"}, []string{"acme", "2026"}, "", false)); slices.Contains(got, "documents:quotes/acme-2024.pdf") {
		t.Errorf("a removed file is found again: %v", got)
	}
	if got := x.Named("documents", "globex-2026.pdf"); len(got) != 1 || got[0].Path != "quotes/globex-2026.pdf" {
		t.Errorf("Named after re-adding: %v", paths(got))
	}
}

func TestStatesQuantity(t *testing.T) {
	for text, want := range map[string]bool{
		"what is 12 percent of 350":               true,
		"add twenty five and three":               true,
		"air quality for the next week":           true,
		"roll the die twice":                      true,
		"who is the vice president of france":     false,
		"what is the best way to boil an egg":     false,
		"what's the magnetic field at distance r": false,
	} {
		if got := StatesQuantity(text); got != want {
			t.Errorf("StatesQuantity(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestStatesTimeAndNamesPlace(t *testing.T) {
	for text, want := range map[string]bool{
		"who won the mvp in 2020":                     true,
		"the concert happening in December":           true,
		"who is the most assist player in the league": false,
	} {
		if got := StatesTime(text); got != want {
			t.Errorf("StatesTime(%q) = %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string]bool{
		"Find a pet store near Los Angeles, CA": true,
		"what's the weather in paris":           false,
		"Where is it? Tell me.":                 false,
		"What is the best way to boil an egg?":  false,
	} {
		if got := NamesPlace(text); got != want {
			t.Errorf("NamesPlace(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestNamedFiles: the files a request writes, once each, in order; a name
// inside quotes or inside the text given to work on is no mention.
func TestNamedFiles(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`compare a.pdf with b.pdf, and a.pdf again; not "c.pdf" which is quoted`, "a.pdf|b.pdf"},
		{"summarize this: see report.pdf for the details of the plan we made", ""},
		{"read ./notes/todo.md then summarize it", "notes/todo.md"},
	} {
		if got := strings.Join(Parse(c.in, Env{}).NamedFiles(), "|"); got != c.want {
			t.Errorf("NamedFiles(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestParts: the interpretation's parts are the request cut where it
// orders tasks.
func TestParts(t *testing.T) {
	in := Parse("read a.txt, then summarize it. After that list the pdfs", Env{})
	if got := strings.Join(in.Parts, "|"); got != "read a.txt|summarize it|list the pdfs" {
		t.Errorf("Parts = %q", got)
	}
}

// TestParsePlain: the cached reading is Parse's with no spaces, the same
// one for the same text.
func TestParsePlain(t *testing.T) {
	const q = "delete old.txt then list the pdfs"
	a, b := ParsePlain(q), ParsePlain(q)
	if a != b {
		t.Error("the same text was read twice")
	}
	p := Parse(q, Env{})
	if a.ExplicitDestructive != p.ExplicitDestructive || !slices.Equal(a.Actions, p.Actions) || !slices.Equal(a.Parts, p.Parts) || !slices.Equal(a.NamedFiles(), p.NamedFiles()) {
		t.Errorf("ParsePlain = %+v, Parse = %+v", a, p)
	}
}

// TestNoActionOneWordNameIsNoObject: a request that asks for no action
// names no file by one of its words meeting a one-word file name ("set
// the thermostat" is not about settings.go); with an action, or by a
// definite noun, it does.
func TestNoActionOneWordNameIsNoObject(t *testing.T) {
	x := NewFileIndex()
	x.Add("cwd", "config/settings.go", false)
	x.Add("cwd", "docs/lease.txt", false)
	env := Env{Spaces: []string{"cwd"}, Index: x}
	if in := Parse("set the thermostat to 21 degrees", env); len(in.Objects) != 0 {
		t.Errorf("set the thermostat: objects %+v, want none", in.Objects)
	}
	if in := Parse("read the settings", env); len(in.Files()) != 1 || in.Files()[0].Resolved() == nil || in.Files()[0].Resolved().Path != "config/settings.go" {
		t.Errorf("read the settings: objects %+v, want config/settings.go", in.Objects)
	}
	if in := Parse("translate the lease", env); len(in.Files()) != 1 || in.Files()[0].Resolved() == nil || in.Files()[0].Resolved().Path != "docs/lease.txt" {
		t.Errorf("translate the lease: objects %+v, want docs/lease.txt", in.Objects)
	}
}

// TestObjectsAsPeopleSayThem: a comparison's side that says only which one
// ("the 2024 and 2025 acme quotes", "the 2023 lease with the 2024 one")
// names the other side's kind of file; a comparison of a named file with a
// described one finds both, in the request's order; "my two recipes" are
// the two; a folder is listed by its name without the word "folder"; a
// listing of a type of files is a listing ("show all markdown files").
func TestObjectsAsPeopleSayThem(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"quotes/acme-2024.pdf", "quotes/acme-2025.pdf", "contracts/lease-2023.txt", "contracts/lease-2024.txt",
		"draft.txt", "final.txt", "recipes/lasagna.md", "recipes/pancakes.md", "notes.md"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	x := NewFileIndex()
	if err := x.Build("documents", dir); err != nil {
		t.Fatal(err)
	}
	env := Env{Spaces: []string{"documents"}, Index: x}
	for q, want := range map[string][][]string{
		"compare the 2024 and 2025 acme quotes":                {{"documents:quotes/acme-2024.pdf"}, {"documents:quotes/acme-2025.pdf"}},
		"compare the 2023 lease with the 2024 one":             {{"documents:contracts/lease-2023.txt"}, {"documents:contracts/lease-2024.txt"}},
		"how does the draft differ from final.txt":             {{"documents:draft.txt"}, {"documents:final.txt"}},
		"compare final.txt with the draft":                     {{"documents:final.txt"}, {"documents:draft.txt"}},
		"compare my two recipes":                               {{"documents:recipes/lasagna.md"}, {"documents:recipes/pancakes.md"}},
		"what changed between draft.txt and the final version": {{"documents:draft.txt"}, {"documents:final.txt"}},
	} {
		in := Parse(q, env)
		var got [][]string
		for _, o := range in.Files() {
			got = append(got, paths(o.Matches))
		}
		if in.Main() != Compare || !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%q: %s %v, want compare %v", q, in.Main(), got, want)
		}
	}
	in := Parse("list the recipes", env)
	if in.Main() != List || in.Folder == nil || in.Folder.Resolved() == nil || in.Folder.Resolved().Path != "recipes" {
		t.Errorf("list the recipes: %s folder %+v", in.Main(), in.Folder)
	}
	in = Parse("show all markdown files in documents", env)
	if in.Main() != List || in.FileType != "md" || in.Space != "documents" {
		t.Errorf("show all markdown files: %s type %q space %q", in.Main(), in.FileType, in.Space)
	}
	if in := Parse("list the notes", env); in.Folder != nil {
		t.Errorf("list the notes: a folder %+v, but notes.md is a file", in.Folder)
	}
}

// TestDirExtsIncremental: the counts of a folder's files by type follow
// Build, Add and Remove (no walk answers them).
func TestDirExtsIncremental(t *testing.T) {
	x, _ := fixture(t)
	if got := x.DirExts("documents", "papers"); len(got) != 1 || got["pdf"] != 2 {
		t.Errorf("papers after Build: %v", got)
	}
	x.Add("documents", "papers/notes.txt", false)
	x.Add("documents", "papers/sub", true)
	if got := x.DirExts("documents", "papers"); got["pdf"] != 2 || got["txt"] != 1 || len(got) != 2 {
		t.Errorf("papers after Add: %v", got)
	}
	x.Remove("documents", "papers/bm25.pdf")
	x.Remove("documents", "papers/notes.txt")
	if got := x.DirExts("documents", "papers"); len(got) != 1 || got["pdf"] != 1 {
		t.Errorf("papers after Remove: %v", got)
	}
	if got := x.DirExts("documents", ""); got["md"] != 1 || got["txt"] != 2 {
		t.Errorf("top folder: %v", got)
	}
	x.Remove("documents", "papers")
	if got := x.DirExts("documents", "papers"); len(got) != 0 {
		t.Errorf("papers after removing the folder: %v", got)
	}
}
