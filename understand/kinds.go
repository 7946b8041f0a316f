package understand

import "strings"

// fileKinds are the kinds of file a person names by one word, with the
// file types each takes in ("the spreadsheets" are csv files as much as
// xlsx ones); the kinds a single type names ("the jpgs") list its
// spellings.
var fileKinds = map[string][]string{
	"spreadsheet":  {"xlsx", "xls", "ods", "csv", "tsv"},
	"image":        {"png", "jpg", "jpeg", "gif", "webp", "heic", "bmp", "tif", "tiff", "svg"},
	"presentation": {"pptx", "ppt", "odp", "key"},
	"jpg":          {"jpg", "jpeg"},
	"tif":          {"tif", "tiff"},
}

// KindTypes are the file types a request's file type (as FileType holds
// it: "pdf", or a kind: "spreadsheet") takes in, in a fixed order.
func KindTypes(kind string) []string {
	if ts, ok := fileKinds[kind]; ok {
		return ts
	}
	if kind == "" {
		return nil
	}
	return []string{kind}
}

// Glob is the list-files pattern for a request's file type: "*.pdf", or
// "*.{xlsx,xls,ods,csv,tsv}" for a kind of several types.
func Glob(kind string) string {
	ts := KindTypes(kind)
	switch len(ts) {
	case 0:
		return ""
	case 1:
		return "*." + ts[0]
	}
	return "*.{" + strings.Join(ts, ",") + "}"
}

// FileTypeIn is the file type or kind the words ask for ("the pdfs" →
// pdf, "pdf files" → pdf, "my photos" → image), "" when they name none.
func FileTypeIn(text string) string {
	if m := reTypeW.FindStringSubmatch(text); m != nil {
		return normExt(m[1])
	}
	return ""
}
