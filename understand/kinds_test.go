package understand

import (
	"slices"
	"testing"
)

// TestKindsOfFile: a word for a kind of file names every type it takes
// in, as one pattern, and a file of any of them is of that kind.
func TestKindsOfFile(t *testing.T) {
	for _, c := range []struct{ text, kind, glob string }{
		{"list all spreadsheets", "spreadsheet", "*.{xlsx,xls,ods,csv,tsv}"},
		{"show me the photos in documents", "image", "*.{png,jpg,jpeg,gif,webp,heic,bmp,tif,tiff,svg}"},
		{"my pics", "image", "*.{png,jpg,jpeg,gif,webp,heic,bmp,tif,tiff,svg}"},
		{"the slides in projects", "presentation", "*.{pptx,ppt,odp,key}"},
		{"the jpegs", "jpg", "*.{jpg,jpeg}"},
		{"the pdfs", "pdf", "*.pdf"},
		{"the markdown files", "md", "*.md"},
		{"the report", "", ""},
	} {
		kind := FileTypeIn(c.text)
		if kind != c.kind || Glob(kind) != c.glob {
			t.Errorf("%q: kind %q, glob %q; want %q, %q", c.text, kind, Glob(kind), c.kind, c.glob)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{"spreadsheet", "csv", true}, {"xlsx", "spreadsheet", true}, {"image", "jpeg", true}, {"image", "pdf", false}, {"txt", "md", true}, {"pdf", "csv", false}} {
		if got := sameKind(c.a, c.b); got != c.want {
			t.Errorf("sameKind(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	in := Parse("show me the photos in documents", Env{Spaces: []string{"documents"}})
	if !in.Has(List) || in.FileType != "image" || !in.Recursive || in.Space != "documents" {
		t.Fatalf("show me the photos in documents: actions %v, type %q, recursive %v, space %q", in.Actions, in.FileType, in.Recursive, in.Space)
	}
	if !slices.Equal(KindTypes("pdf"), []string{"pdf"}) || KindTypes("") != nil {
		t.Fatalf("KindTypes of a plain type or none: %v, %v", KindTypes("pdf"), KindTypes(""))
	}
}

// TestSearchByName: a search of a space or folder for a word lists the
// files whose names say it (any case); for a kind of file, that kind; a
// search of anything that is no space, or a text or arithmetic, is not one.
func TestSearchByName(t *testing.T) {
	env := Env{Spaces: []string{"documents"}}
	for _, c := range []struct {
		q, name, kind string
		list          bool
	}{
		{"search my documents for attention", "attention", "", true},
		{"look through the documents folder for bm25", "bm25", "", true},
		{"find the files named acme", "acme", "", true},
		{"show me the files called Budget", "Budget", "", true},
		{"search my documents for photos", "", "image", true},
		{"search the web for cheap flights", "", "", false},
		{"search my documents for files", "", "", false},
	} {
		in := Parse(c.q, env)
		if in.NameHas != c.name || in.FileType != c.kind || in.Has(List) != c.list {
			t.Errorf("%q: name %q, type %q, list %v; want %q, %q, %v", c.q, in.NameHas, in.FileType, in.Has(List), c.name, c.kind, c.list)
		}
	}
	for _, c := range []struct{ word, kind, glob string }{
		{"attention", "", "*{attention,Attention,ATTENTION}*"},
		{"Budget", "spreadsheet", "*{budget,Budget,BUDGET}*.{xlsx,xls,ods,csv,tsv}"},
		{"42", "", "*42*"},
		{"élan", "pdf", "*{élan,Élan,ÉLAN}*.pdf"},
	} {
		if got := NameGlob(c.word, c.kind); got != c.glob {
			t.Errorf("NameGlob(%q, %q) = %q, want %q", c.word, c.kind, got, c.glob)
		}
	}
}
