package engine

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/selector"
	"github.com/airs-dev/airs/understand"
)

// MissingFilesError says which files a request (or the call chosen for it)
// names that are in no space the caller can read. Nothing ran.
type MissingFilesError struct {
	Names  []string // as the request or the call wrote them
	Spaces []string // "name (dir)" of the spaces searched
}

func (e *MissingFilesError) Error() string {
	where := "you can read no space (grant ReadSpace(<space>) in airs.yaml)"
	if len(e.Spaces) > 0 {
		where = "searched " + strings.Join(e.Spaces, ", ")
	}
	what := "file"
	if len(e.Names) > 1 {
		what = "files"
	}
	return fmt.Sprintf("not found: %s (%s named in the request; %s): check the names, or list the space with the list-files tool",
		strings.Join(e.Names, ", "), what, where)
}

// CheckObjects checks, before anything runs, that the files a selection
// will work on exist: with a model, the space and path of the chosen call
// (a tool that reads a space names it in a "space" argument and the file
// in "path"); in no-LLM mode, every file name the request mentions outside
// quotes, looked up in each space the caller may read. No-LLM mode checks
// the request's own mentions because it may not have given every file to
// the call ("compare a.pdf and b.pdf" is two reads and a comparison): the
// error must name every missing file, not only the first one the first
// step would trip on.
func (e *Engine) CheckObjects(caller, request string, sel *selector.Selection) error {
	var missing []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			missing = append(missing, n)
		}
	}
	readable := e.readableSpaces(caller)
	// The call's own space and path, when a model wrote them. In no-LLM
	// mode the path is the extractor's reading of the request, which may be
	// any word of it: the user's files are the request's mentions below.
	if sel != nil && sel.Function != "" && sel.Mode != selector.ModeNoLLM {
		var args map[string]any
		if json.Unmarshal(sel.Arguments, &args) == nil {
			sp, _ := args["space"].(string)
			p, _ := args["path"].(string)
			if dir, ok := e.cfg.Spaces[sp]; ok && p != "" && !strings.Contains(p, "{{") && readable[sp] {
				if !exists(dir, p) {
					add(p)
				}
			}
		}
	}
	if sel != nil && sel.Mode == selector.ModeNoLLM {
		for _, n := range understand.ParsePlain(request).NamedFiles() {
			found := false
			for sp := range readable {
				if e.fileIndex().Has(sp, n) || exists(e.cfg.Spaces[sp], n) {
					found = true
					break
				}
			}
			if !found {
				add(n)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var spaces []string
	for sp := range readable {
		spaces = append(spaces, fmt.Sprintf("%s (%s)", sp, e.cfg.Spaces[sp]))
	}
	sort.Strings(spaces)
	return &MissingFilesError{Names: missing, Spaces: spaces}
}

// readableSpaces are the configured spaces the caller holds ReadSpace of.
func (e *Engine) readableSpaces(caller string) map[string]bool {
	out := map[string]bool{}
	policy := e.catalog.Policy
	for sp := range e.cfg.Spaces {
		if policy == nil || policy.Holds(caller, pipeline.Capability{Kind: builtin.KindReadSpace, Arg: sp}) {
			out[sp] = true
		}
	}
	return out
}

// maxWalk bounds the entries a search by base name visits in one space.
const maxWalk = 20000

// exists reports whether rel names a file or folder inside dir, resolved
// through os.Root so that no name can reach outside the space. A bare name
// ("todo.txt") is also found in a subfolder (notes/todo.txt): a user names
// a file, not its folder. When the search is cut at maxWalk entries the
// answer is yes: the check must only stop a call on a file that is surely
// not there.
func exists(dir, rel string) bool {
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || strings.HasPrefix(rel, "/") || strings.HasPrefix(rel, "../") || rel == ".." {
		return false
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false
	}
	defer root.Close()
	if _, err := root.Stat(rel); err == nil {
		return true
	}
	if strings.Contains(rel, "/") {
		return false
	}
	found, n := false, 0
	_ = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if n++; n > maxWalk {
			found = true
			return fs.SkipAll
		}
		if err == nil && d.Name() == rel {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// fileNames is the index of the spaces' file names, built on first use
// (one walk per space) and kept current by the file watcher's events
// (noteFile), never walked per request.
type fileNames struct {
	once sync.Once
	idx  *understand.FileIndex

	// last are the files each caller's latest turn worked on, for the
	// next request that refers to them ("summarize it", "delete them").
	mu   sync.Mutex
	last map[string][]fileRef
}

// fileRef is a file in a space.
type fileRef struct{ space, path string }

// maxCallersRemembered bounds the callers whose latest files are kept.
const maxCallersRemembered = 1024

var (
	// reReferent is a request's word for what the conversation just
	// worked on: "it" or "them" anywhere, "that", "this", "those",
	// "these" or "both" as its last word.
	reReferent = regexp.MustCompile(`(?i)\b(?:it|them)\b|\b(?:that|this|those|these|both)\s*(?:one|ones|file|files|again|too|please|first)?\s*[.?!]*\s*$`)
	// reItIs: "it" in "it's", "is it", "it is" asks about something, names
	// nothing worked on — but "what is it about" asks for its gist.
	reItIs     = regexp.MustCompile(`(?i)\bit'?s\b|\bis\s+it\b|\bit\s+is\b`)
	reItsAbout = regexp.MustCompile(`(?i)\bwhat(?:'s|\s+is)\s+it\s+about\b`)
)

// Referents rewrites a request that refers to the files caller's latest
// turn worked on ("summarize it" after reading quotes/acme-2025.pdf) so
// that it names them, and says so (note). A request that names files of
// its own, gives a text or arithmetic, or asks for nothing done to a file,
// is left as it is.
func (e *Engine) Referents(caller, text string) (rewritten, note string) {
	e.files.mu.Lock()
	last := e.files.last[caller]
	e.files.mu.Unlock()
	if len(last) == 0 || !reReferent.MatchString(text) || reItIs.MatchString(text) && !reItsAbout.MatchString(text) {
		return text, ""
	}
	in := e.sel.Understand(caller, text)
	if in.Body != "" || in.Expression != "" || len(in.Objects) > 0 || in.Folder != nil ||
		len(in.Parts) > 1 || in.Has(understand.List) || in.FileType != "" {
		// The request works on files of its own, or names what "them" is
		// ("find the PDFs, then summarize them").
		return text, ""
	}
	acts := false
	for _, a := range in.Actions {
		acts = acts || a.NeedsFile()
	}
	if !acts {
		return text, ""
	}
	var names []string
	for _, f := range last {
		names = append(names, f.path)
	}
	named := strings.Join(names, " and ")
	if sp := last[0].space; len(e.readableSpaces(caller)) > 1 {
		named += " in " + sp
	}
	done := false
	rewritten = reReferent.ReplaceAllStringFunc(text, func(m string) string {
		if done {
			return ""
		}
		done = true
		return named
	})
	return rewritten, fmt.Sprintf("%q read as %q (the files of your last request)", text, rewritten)
}

// rememberFiles keeps the files a turn worked on (the steps' space and
// path, those a step gave another left out) for the next request's "it".
func (e *Engine) rememberFiles(caller string, tr *TurnResult) {
	var refs []fileRef
	for _, st := range tr.Steps {
		if st.Selection == nil || st.Result == nil || st.CallErr != nil {
			continue
		}
		var args map[string]any
		if json.Unmarshal(st.Selection.Arguments, &args) != nil {
			continue
		}
		sp, _ := args["space"].(string)
		p, _ := args["path"].(string)
		if sp == "" || p == "" || strings.Contains(p, "{{") {
			continue
		}
		r := fileRef{sp, p}
		if !slices.Contains(refs, r) {
			refs = append(refs, r)
		}
	}
	if len(refs) == 0 {
		return
	}
	e.files.mu.Lock()
	defer e.files.mu.Unlock()
	if e.files.last == nil || len(e.files.last) >= maxCallersRemembered {
		e.files.last = map[string][]fileRef{}
	}
	e.files.last[caller] = refs
}

func (e *Engine) fileIndex() *understand.FileIndex {
	e.files.once.Do(func() {
		e.files.idx = understand.NewFileIndex()
		for sp, dir := range e.cfg.Spaces {
			_ = e.files.idx.Build(sp, dir) // an unreadable space holds nothing to name
		}
	})
	return e.files.idx
}

// noteFile keeps the file-name index current with one watcher event.
func (e *Engine) noteFile(space, rel string, gone bool) {
	idx := e.fileIndex()
	if gone {
		idx.Remove(space, rel)
		return
	}
	dir := false
	if d, ok := e.cfg.Spaces[space]; ok {
		if st, err := os.Stat(filepath.Join(d, filepath.FromSlash(rel))); err == nil {
			dir = st.IsDir()
		} else {
			idx.Remove(space, rel)
			return
		}
	}
	idx.Add(space, rel, dir)
}

// understandEnv is what no-LLM mode reads caller's requests against: the
// spaces it may read and their files' names.
func (e *Engine) understandEnv(caller string) understand.Env {
	var spaces []string
	if caller == "" {
		for sp := range e.cfg.Spaces {
			spaces = append(spaces, sp)
		}
	} else {
		for sp := range e.readableSpaces(caller) {
			spaces = append(spaces, sp)
		}
	}
	sort.Strings(spaces)
	return understand.Env{Spaces: spaces, Index: e.fileIndex()}
}
