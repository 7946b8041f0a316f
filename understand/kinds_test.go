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
