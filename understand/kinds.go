package understand

import (
	"slices"
	"strings"
)

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

// reSearchPlace is a search of a space or folder for one word ("search my
// documents for attention", "look through the papers folder for bm25");
// reFindNamed asks for the files of a name ("find the files named budget").
var (
	reSearchPlace = MustPattern(`(?i)\b(?:search|look\s+through|look\s+in|go\s+through)\s+(?:in\s+|through\s+)?(?:my\s+|the\s+|all\s+(?:my\s+|the\s+)?)?\w+(?:\s+(?:folder|space|directory|files))?\s+for\s+(?:files?\s+(?:named|called)\s+|the\s+word\s+|anything\s+(?:named|called|about)\s+)?["'“]?([\p{L}\d][\p{L}\d_-]{1,40})["'”]?\s*[.?!]?\s*$`)
	reFindNamed   = MustPattern(`(?i)\b(?:find|list|show)\s+(?:me\s+)?(?:the\s+|all\s+|any\s+|my\s+)?(?:files?|documents?|papers?)\s+(?:named|called|whose\s+names?\s+(?:contains?|has|have))\s+["'“]?([\p{L}\d][\p{L}\d_-]{1,40})["'”]?`)
)

// nameSearch reads a search for files by name: the one word their names
// must contain ("" when the request searches a place for a kind of file,
// "search my documents for photos"), whether it is such a search, and
// whether it needs the request to name the place searched (a search
// "for" a word does: "search the web for flights" is no file search).
func nameSearch(text string) (word string, search, needsPlace bool) {
	if m := reFindNamed.FindStringSubmatch(text); m != nil {
		return m[1], true, false
	}
	m := reSearchPlace.FindStringSubmatch(text)
	if m == nil {
		return "", false, false
	}
	switch w := strings.ToLower(m[1]); {
	case FileTypeIn(w) != "":
		return "", true, true
	case slices.Contains([]string{"files", "file", "documents", "docs", "anything", "something", "everything", "stuff", "it", "them"}, w):
		return "", false, false
	}
	return m[1], true, true
}

// NameGlob is the list-files pattern for files whose names contain word,
// in its lower-case, capitalised and upper-case spellings (the pattern
// is case-sensitive), with the kind's types when there is one.
func NameGlob(word, kind string) string {
	lower := strings.ToLower(word)
	r := []rune(lower)
	spellings := []string{lower}
	for _, s := range []string{strings.ToUpper(string(r[:1])) + string(r[1:]), strings.ToUpper(lower)} {
		if !slices.Contains(spellings, s) {
			spellings = append(spellings, s)
		}
	}
	name := "*" + lower + "*"
	if len(spellings) > 1 {
		name = "*{" + strings.Join(spellings, ",") + "}*"
	}
	if g := Glob(kind); g != "" {
		return name + strings.TrimPrefix(g, "*")
	}
	return name
}
