package selector

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// What a tool takes and gives, read from its schemas: the role of each
// parameter (a space, a path, a folder, an expression, a text), whether
// it reads a file into text, and which file types it reads.

// paramRole is what kind of value a parameter takes.
type paramRole int

const (
	roleOther paramRole = iota
	roleSpace
	rolePath
	roleDir
	roleExpr
	roleText
)

var textNames = map[string]bool{"text": true, "content": true, "contents": true, "body": true, "input": true, "document": true, "a": true, "b": true, "source": true, "passage": true}

func roleOf(name string, p *prop) paramRole {
	if !p.is("string") {
		return roleOther
	}
	ln := strings.ToLower(name)
	d := strings.ToLower(p.Description)
	switch {
	case ln == "space":
		return roleSpace
	case ln == "dir" || ln == "folder" || ln == "directory":
		return roleDir
	case ln == "expression" || strings.Contains(d, "arithmetic expression") || strings.Contains(d, "math expression"):
		return roleExpr
	case namesFile(p) && ln != "name" && ln != "label" && !strings.HasSuffix(ln, "_label"):
		return rolePath
	case textNames[ln] || strings.Contains(d, "the text") || strings.Contains(d, " text (") || strings.HasPrefix(d, "the first") || strings.HasPrefix(d, "the second"):
		return roleText
	}
	return roleOther
}

// toolShape is a tool's parameters by role.
type toolShape struct {
	t        pipeline.Tool
	root     *prop
	required []*prop
	roles    map[string]paramRole
	pathDesc string // its path parameter's description, lower case
	textOut  bool   // its output has a top-level "text" string
}

// toolKey identifies a tool's text and schemas for the caches: a tool
// registered again with other text or schemas under the same name and
// version changes their lengths.
type toolKey struct {
	name, version string
	desc, params  int
	returns       int
}

func keyOf(t pipeline.Tool) toolKey {
	return toolKey{t.Name, t.Version, len(t.Description), len(t.Parameters), len(t.ReturnSchema)}
}

// shapes caches each tool's shape (read-only once stored).
var shapes = struct {
	sync.RWMutex
	m map[toolKey]*toolShape
}{m: map[toolKey]*toolShape{}}

func shapeOf(t pipeline.Tool) (*toolShape, error) {
	k := keyOf(t)
	shapes.RLock()
	sh, ok := shapes.m[k]
	shapes.RUnlock()
	if ok {
		if sh.t.ReadOnly == t.ReadOnly && sh.t.Destructive == t.Destructive {
			return sh, nil
		}
		c := *sh
		c.t = t // flags as registered now
		return &c, nil
	}
	sh, err := shapeOfTool(t)
	if err == nil {
		shapes.Lock()
		if len(shapes.m) > maxCachedTools {
			clear(shapes.m)
		}
		shapes.m[k] = sh
		shapes.Unlock()
	}
	return sh, err
}

// maxCachedTools bounds the caches of tool shapes and words.
const maxCachedTools = 50_000

func shapeOfTool(t pipeline.Tool) (*toolShape, error) {
	root, err := parseProp("", t.Parameters)
	if err != nil {
		return nil, err
	}
	sh := &toolShape{t: t, root: root, roles: map[string]paramRole{}}
	for _, p := range root.Props {
		r := roleOf(p.Name, p)
		sh.roles[p.Name] = r
		if r == rolePath {
			sh.pathDesc = strings.ToLower(p.Description)
		}
		if root.Required[p.Name] {
			sh.required = append(sh.required, p)
		}
	}
	if paths, err := chains.OutputPaths(t, 1, maxOutputPaths); err == nil {
		for _, op := range paths {
			if len(op.Elems) == 1 && op.Elems[0].IsKey() && op.Elems[0].Key == "text" && slices.Contains(op.Types, "string") {
				sh.textOut = true
			}
		}
	}
	return sh, nil
}

// isReader: a read-only tool that takes a file's path and gives its text.
func (sh *toolShape) isReader() bool {
	if !sh.t.ReadOnly || sh.t.Destructive || !sh.textOut {
		return false
	}
	for _, p := range sh.required {
		if sh.roles[p.Name] == rolePath {
			return true
		}
	}
	return false
}

// typeWords are the words a tool uses for a file type.
var typeWords = map[string][]string{
	"pdf": {"pdf"}, "txt": {"text", "plain"}, "md": {"markdown", "md"}, "csv": {"csv"}, "json": {"json"},
	"yaml": {"yaml"}, "html": {"html"}, "log": {"log", "text"}, "go": {"source"}, "py": {"source"}, "js": {"source"},
}

var reTypeName = regexp.MustCompile(`\b(pdf|csv|json|yaml|html|markdown|docx?|xlsx?|image|png|jpe?g)\b`)

// fitsType scores how well a reader reads files of type ext: its name
// says the type (2), its text does (1); a path parameter that names
// another type only ("PDF path") does not read this one (-1).
func (sh *toolShape) fitsType(ext string) int {
	ws := typeWords[ext]
	if ws == nil {
		ws = []string{ext}
	}
	name, desc := strings.ToLower(sh.t.Name), strings.ToLower(sh.t.Description)
	for _, m := range reTypeName.FindAllString(sh.pathDesc, -1) {
		if !slices.Contains(ws, m) && !(m == "markdown" && ext == "md") {
			return -1
		}
	}
	for _, w := range ws {
		if cachedRegexp(`\b` + w + `\b`).MatchString(name) {
			return 2
		}
	}
	for _, w := range ws {
		if cachedRegexp(`\b` + w + `\b`).MatchString(desc) {
			return 1
		}
	}
	return 0
}

// ArgumentsFit checks that each argument of a call is a value of the type
// its parameter takes, as the interpretation types them: an expression
// the calculator reads for an expression, a file's name for a path (and,
// when exists is given, one that is there), a space the caller has for a
// space. Validation by the schema alone accepts calculator
// {"expression":"documents"}; this does not. nil when every argument fits.
func ArgumentsFit(t pipeline.Tool, args map[string]any, spaces []string, exists func(space, path string) bool) error {
	sh, err := shapeOf(t)
	if err != nil {
		return err
	}
	space, _ := args["space"].(string)
	for name, v := range args {
		s, ok := v.(string)
		if !ok {
			continue
		}
		switch sh.roles[name] {
		case roleExpr:
			if !understand.IsExpression(s) {
				return fmt.Errorf("%s %q is no arithmetic expression", name, s)
			}
		case roleSpace:
			if len(spaces) > 0 && !slices.Contains(spaces, s) {
				return fmt.Errorf("%s %q is no space", name, s)
			}
		case rolePath:
			if !cachedRegexp(`\.\w{1,5}$`).MatchString(s) {
				return fmt.Errorf("%s %q is no file name", name, s)
			}
			if ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(s), ".")); sh.fitsType(ext) < 0 {
				return fmt.Errorf("%s %q is a .%s file, which %s does not read", name, s, ext, t.Name)
			}
			if exists != nil && space != "" && !exists(space, s) {
				return fmt.Errorf("%s %q is not in %s", name, s, space)
			}
		}
	}
	return nil
}
