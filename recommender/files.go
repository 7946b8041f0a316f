package recommender

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/airs-dev/airs/pipeline"
)

// kindWords are the words a tool's text uses for a kind of file, by
// extension. They name the kind itself ("pdf", "csv", "markdown", "plain
// text"), not what a tool makes of it: "extract the text of a PDF" is no
// claim to read text files.
var kindWords = map[string][]string{
	"pdf":  {"pdf"},
	"md":   {"markdown"},
	"txt":  {"plain text", "txt", "notes"},
	"csv":  {"csv"},
	"tsv":  {"tsv"},
	"json": {"json"},
	"png":  {"image", "png"}, "jpg": {"image", "jpeg"}, "jpeg": {"image", "jpeg"},
	"go": {"source code"}, "py": {"source code"},
}

// fileParam is the name of the parameter through which t takes a file in a
// space ("" when it takes none): t needs a "space" parameter and a string
// parameter named like a path.
func fileParam(t pipeline.Tool) string { return fileParamOf(properties(t.Parameters)) }

func fileParamOf(props map[string]prop) string {
	if _, ok := props["space"]; !ok {
		return ""
	}
	for _, n := range []string{"path", "file", "file_path", "filename"} {
		if p, ok := props[n]; ok && p.Type == "string" {
			return n
		}
	}
	return ""
}

// fileScore scores t for the newest file event it can take: 0.4 for a tool
// that takes files at all, 1 for one whose text names the file's kind.
func fileScore(t pipeline.Tool, ti *toolInfo, files []FileEvent) (float64, FileEvent) {
	if len(files) == 0 || ti.fileParam == "" {
		return 0, FileEvent{}
	}
	best, bestF := 0.0, FileEvent{}
	for i := len(files) - 1; i >= 0; i-- {
		f := ti.nameFor(files[i])
		s := 0.4
		if ti.namesKind(fileKind(f.Rel)) {
			s = 1
		}
		if s > best {
			best, bestF = s, f
		}
		if best == 1 {
			break
		}
	}
	return best, bestF
}

// nameFor is f under the first of its names whose space the tool, as the
// caller sees it, takes (f itself when none is: the schema's checks then
// turn the suggestion away, as for any space the caller may not read).
func (ti *toolInfo) nameFor(f FileEvent) FileEvent {
	if len(f.Also) == 0 {
		return f
	}
	p, ok := ti.props["space"]
	for _, n := range f.names() {
		if !ok || p.Enum == nil || slices.ContainsFunc(p.Enum, func(e any) bool { return e == n.Space }) {
			return FileEvent{Space: n.Space, Rel: n.Rel, Op: f.Op, At: f.At}
		}
	}
	return f
}

func fileArgs(ti *toolInfo, f FileEvent) map[string]any {
	p := ti.fileParam
	if p == "" || f.Rel == "" {
		return nil
	}
	return map[string]any{"space": f.Space, p: f.Rel}
}

type prop struct {
	Type        string `json:"type"`
	Description string `json:"description"`
	Enum        []any  `json:"enum"`
}

func properties(schema json.RawMessage) map[string]prop {
	var s struct {
		Properties map[string]prop `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Properties
}

// allowedByView checks args against the enums of the tool as the caller
// sees it (the catalog narrows a bound parameter's enum, such as space, to
// what the caller may use): the pipeline's schema stage checks the
// registered schema, which still lists every value.
func allowedByView(ti *toolInfo, args map[string]any) bool {
	for name, p := range ti.props {
		v, ok := args[name]
		if !ok || p.Enum == nil {
			continue
		}
		if !slices.ContainsFunc(p.Enum, func(e any) bool { return e == v }) {
			return false
		}
	}
	return true
}

func paramDocsOf(props map[string]prop) []string {
	var out []string
	for n, p := range props {
		out = append(out, n+" "+p.Description)
	}
	slices.Sort(out)
	return out
}

// namesKind reports whether the tool's text uses a word for files of kind
// (an extension), remembered per kind.
func (ti *toolInfo) namesKind(kind string) bool {
	if v, ok := ti.kinds[kind]; ok {
		return v
	}
	v := false
	for _, sentence := range strings.FieldsFunc(ti.lower, func(r rune) bool { return r == '.' || r == ';' || r == '\n' }) {
		if negative(sentence) {
			continue // "for PDF documents use pdf-extract instead" is no claim to read PDFs
		}
		for _, w := range kindWords[kind] {
			if strings.Contains(sentence, w) {
				v = true
			}
		}
	}
	if ti.kinds == nil {
		ti.kinds = map[string]bool{}
	}
	if len(ti.kinds) < 64 {
		ti.kinds[kind] = v
	}
	return v
}

// negative reports whether a sentence of a tool's description turns a kind
// away rather than claiming it.
func negative(sentence string) bool {
	for _, m := range []string{"instead", " not ", "n't", "refuse", "unsupported", "except"} {
		if strings.Contains(sentence, m) {
			return true
		}
	}
	return false
}
