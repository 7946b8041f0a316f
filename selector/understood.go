package selector

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// No-LLM planning from the request's interpretation (understand.Parse):
// the tool is the one whose words cover the request's action, and its
// arguments are filled by type from what the interpretation resolved —
// a file the request names for a parameter that takes a path (with the
// space it is in), the arithmetic for one that takes an expression, the
// given text, or the text a reading step produces, for one that takes a
// text. Which tools read which files, and which outputs feed which
// parameters, come from the tools' schemas (a required path parameter
// and a text output make a reader; a PDF path only a PDF's), not from
// their names, so outside tools combine the same way.

// Choice is one of several files a request names equally well.
type Choice struct {
	Space string `json:"space"`
	Path  string `json:"path"`
}

// MissingSpaceError: the request names a usual folder that is no space.
type MissingSpaceError struct {
	Name   string   // as the request names it ("documents")
	Usual  string   // its usual place ("~/Documents")
	Spaces []string // the spaces there are
}

func (e *MissingSpaceError) Error() string {
	have := "no space is configured"
	if len(e.Spaces) > 0 {
		have = "the spaces are " + strings.Join(e.Spaces, ", ")
	}
	return fmt.Sprintf("there is no space %q (%s): create %s, or map the space to a folder in airs.yaml (spaces:\n  %s: DIR) and grant ReadSpace(%s); nothing ran",
		e.Name, have, e.Usual, e.Name, e.Name)
}

// AmbiguousError: a request names several files equally well; nothing is
// guessed. Choices lists them.
type AmbiguousError struct {
	Phrase  string
	Choices []Choice
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q names %d files equally well; say which one:", e.Phrase, len(e.Choices))
	for i, c := range e.Choices {
		fmt.Fprintf(&b, "\n  %d. %s (space %s)", i+1, c.Path, c.Space)
	}
	return b.String()
}

// Ambiguity is the phrase that matched several files and the files, for a
// transport that answers with them (server.Ambiguous).
func (e *AmbiguousError) Ambiguity() (string, any) { return e.Phrase, e.Choices }

// Understand reads a request for caller against the spaces it may read.
func (s *Selector) Understand(caller, request string) *understand.Interpretation {
	return understand.Parse(request, s.envFor(caller))
}

func (s *Selector) envFor(caller string) understand.Env {
	if s.Env != nil {
		return s.Env(caller)
	}
	return understand.Env{Spaces: s.Config.Hints.Spaces}
}

// typed reports whether the interpretation has something for typed filling.
func typed(in *understand.Interpretation) bool {
	return in.Expression != "" || in.Body != "" || len(in.Objects) > 0 || in.Folder != nil ||
		in.MissingSpace != "" || in.Has(understand.List) || in.Space != "" && len(in.Actions) > 0
}

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

// planner holds one request's planning state.
type planner struct {
	s       *Selector
	env     understand.Env
	in      *understand.Interpretation
	request string
	entries map[string]Entry
	shapes  map[string]*toolShape
	readers []*toolShape
	// readersLoaded: readers holds every reader (loadReaders ran).
	readersLoaded bool
	steps         []map[string]any
}

func (pl *planner) shape(name string) *toolShape {
	if sh, ok := pl.shapes[name]; ok {
		return sh
	}
	e, ok := pl.entries[name]
	if !ok {
		return nil
	}
	sh, err := shapeOf(e.Tool)
	if err != nil {
		sh = nil
	}
	pl.shapes[name] = sh
	return sh
}

// loadReaders finds, only when one is needed, the caller's tools that read
// a file into text: from the catalog's view when the entries are one
// (found once per catalog), else from the entries.
func (pl *planner) loadReaders() {
	if pl.readersLoaded {
		return
	}
	pl.readersLoaded = true
	if v := viewWith(pl.entries); v != nil {
		pl.readers = v.fileReaders() // once per catalog, not per request
		return
	}
	pl.readers = readersOf(pl.entries)
}

// readerFor is the best reader of files of type ext.
func (pl *planner) readerFor(ext string) *toolShape {
	pl.loadReaders()
	var best *toolShape
	bestScore := -1
	for _, r := range pl.readers {
		if sc := r.fitsType(ext); sc > bestScore || sc == bestScore && best != nil && r.t.Name < best.t.Name {
			best, bestScore = r, sc
		}
	}
	if bestScore < 0 {
		return nil
	}
	return best
}

func (pl *planner) add(tool string, args map[string]any, foreach string) string {
	id := StepID(len(pl.steps) + 1)
	raw, _ := json.Marshal(args)
	st := map[string]any{"id": id, "function": tool, "arguments": json.RawMessage(raw)}
	if foreach != "" {
		st["foreach"] = foreach
	}
	pl.steps = append(pl.steps, st)
	return id
}

// errUseReader: the tool tried reads the file, but another reads its type
// better (pdf-extract a PDF): that one serves the request.
type errUseReader struct{ r *toolShape }

func (e errUseReader) Error() string { return e.r.t.Name + " reads this type of file better" }

// errAmbiguous carries the choices up from filling.
type errAmbiguous struct{ err *AmbiguousError }

func (e errAmbiguous) Error() string { return e.err.Error() }

func choicesOf(o understand.Object) *AmbiguousError {
	a := &AmbiguousError{Phrase: o.Phrase}
	for _, m := range o.Matches {
		a.Choices = append(a.Choices, Choice{Space: m.Space, Path: m.Path})
	}
	return a
}

// readStep adds the step that reads file e (as text) and returns a
// reference to its text.
func (pl *planner) readStep(e *understand.Entry) (string, error) {
	r := pl.readerFor(e.Ext())
	if r == nil {
		return "", fmt.Errorf("no tool reads %s files", e.Ext())
	}
	args := map[string]any{}
	for _, p := range r.required {
		switch r.roles[p.Name] {
		case roleSpace:
			args[p.Name] = e.Space
		case rolePath:
			args[p.Name] = e.Path
		default:
			return "", fmt.Errorf("%s needs %s, which a read does not give", r.t.Name, p.Name)
		}
	}
	id := pl.add(r.t.Name, args, "")
	return "{{steps." + id + ".output.text}}", nil
}

// fill plans the call of tool sh for the request, with the steps that
// produce what it takes; it fails (no steps kept) when a required
// argument has no value of its type in the request.
func (pl *planner) fill(sh *toolShape, strict bool) error {
	in := pl.in
	pl.steps = nil
	args := map[string]any{}
	files := in.Files()
	nextFile := 0
	var texts []string
	foreach := ""
	needText := 0
	for _, p := range sh.required {
		if sh.roles[p.Name] == roleText {
			needText++
		}
	}
	// A file object's matches must be one file, else the user chooses.
	pick := func(o understand.Object) (*understand.Entry, error) {
		switch len(o.Matches) {
		case 0:
			if o.Named {
				// A file named but nowhere: the call names it as written,
				// and the check before anything runs says it is missing.
				return pl.unfound(o.Phrase), nil
			}
			return nil, fmt.Errorf("no file matches %q", o.Phrase)
		case 1:
			return o.Matches[0], nil
		}
		return nil, errAmbiguous{choicesOf(o)}
	}
	var pathEntry *understand.Entry
	for _, p := range sh.required {
		switch sh.roles[p.Name] {
		case roleExpr:
			if in.Expression == "" {
				return fmt.Errorf("the request states no arithmetic")
			}
			args[p.Name] = in.Expression
		case rolePath:
			if in.Every && in.Folder != nil {
				return fmt.Errorf("the request is about every file of a folder")
			}
			if nextFile >= len(files) {
				return fmt.Errorf("the request names no file")
			}
			e, err := pick(files[nextFile])
			if err != nil {
				return err
			}
			nextFile++
			if sh.isReader() && sh.fitsType(e.Ext()) < 0 {
				return fmt.Errorf("%s does not read %s files", sh.t.Name, e.Ext())
			}
			if best := pl.readerFor(e.Ext()); sh.isReader() && best != nil && best != sh {
				return errUseReader{best}
			}
			args[p.Name], pathEntry = e.Path, e
			if _, spaced := sh.roles["space"]; !spaced && files[nextFile-1].Named {
				// No space to resolve it in: the name as the request wrote it.
				args[p.Name] = files[nextFile-1].Phrase
			}
		case roleText:
			switch {
			case in.Body != "" && needText == 1:
				args[p.Name] = in.Body
			case in.Every && in.Folder != nil && needText == 1:
				ref, src, err := pl.everyFile()
				if err != nil {
					return err
				}
				args[p.Name], foreach = ref, src
			case len(files)-nextFile >= 1:
				e, err := pick(files[nextFile])
				if err != nil {
					return err
				}
				nextFile++
				ref, err := pl.readStep(e)
				if err != nil {
					return err
				}
				args[p.Name] = ref
				texts = append(texts, ref)
			default:
				if tv, ok := typedValues(sh, pl.wordsFor()).args[p.Name]; ok {
					args[p.Name] = tv
					continue
				}
				return fmt.Errorf("the request gives no text for %s", p.Name)
			}
		}
	}
	for _, p := range sh.required {
		if sh.roles[p.Name] != roleSpace {
			continue
		}
		switch {
		case pathEntry != nil:
			args[p.Name] = pathEntry.Space
		case in.Folder != nil && in.Folder.Resolved() != nil:
			args[p.Name] = in.Folder.Resolved().Space
		case in.Space != "":
			args[p.Name] = in.Space
		case len(pl.env.Spaces) == 1:
			args[p.Name] = pl.env.Spaces[0]
		case len(pl.env.Spaces) > 1:
			a := &AmbiguousError{Phrase: "which space"}
			for _, sp := range pl.env.Spaces {
				a.Choices = append(a.Choices, Choice{Space: sp})
			}
			return errAmbiguous{a}
		default:
			return fmt.Errorf("the request names no space")
		}
	}
	// Folder and listing options, for a tool that takes them.
	for _, p := range sh.root.Props {
		switch {
		case sh.roles[p.Name] == roleDir && in.Folder != nil:
			f := in.Folder.Resolved()
			if f == nil {
				return errAmbiguous{choicesOf(*in.Folder)}
			}
			if sp, ok := args["space"]; !ok || sp == f.Space {
				args[p.Name] = f.Path
			}
		case p.Name == "pattern" && p.is("string") && in.FileType != "" && !sh.root.Required[p.Name]:
			args[p.Name] = "*." + in.FileType
		case p.Name == "recursive" && p.is("boolean") && in.Recursive:
			args[p.Name] = true
		}
	}
	// Every other argument by its type from the words (an enum's value, a
	// date, an example's shape, a quoted text, a number); a required one
	// of no telling type as extraction reads the words, unless strict.
	tf := typedValues(sh, pl.wordsFor())
	var ex map[string]any
	var missing []string
	for _, p := range sh.root.Props {
		if _, set := args[p.Name]; set || sh.roles[p.Name] != roleOther && sh.roles[p.Name] != roleText {
			continue
		}
		if v, ok := tf.args[p.Name]; ok {
			args[p.Name] = v
			continue
		}
		if !sh.root.Required[p.Name] {
			continue
		}
		if strict {
			return fmt.Errorf("the request gives no value of %s's type", p.Name)
		}
		if ex == nil {
			var err error
			if ex, missing, err = ExtractArgumentsReport(sh.t.Parameters, pl.wordsFor(), pl.s.Config.Hints); err != nil {
				return err
			}
		}
		v, ok := ex[p.Name]
		if !ok || v == "" || slices.Contains(missing, p.Name) || pl.otherType(v) {
			return fmt.Errorf("the request gives no %s", p.Name)
		}
		args[p.Name] = v
	}
	if strict && tf.specific == 0 && pathEntry == nil && in.Expression == "" && foreach == "" && len(texts) == 0 {
		return fmt.Errorf("the request's words are hardly about %s, and it gives no value of a telling type for it", sh.t.Name)
	}
	if sh.t.Destructive && !in.ExplicitDestructive {
		return fmt.Errorf("%s is destructive and the request does not ask for it", sh.t.Name)
	}
	pl.add(sh.t.Name, args, foreach)
	return nil
}

// unfound is the entry a named file would be: its name as written, in
// the space the request names (or the only one).
func (pl *planner) unfound(name string) *understand.Entry {
	sp := pl.in.Space
	if sp == "" && len(pl.env.Spaces) > 0 {
		sp = pl.env.Spaces[0]
	}
	return understand.NewEntry(sp, name, false)
}

// otherType: a value extraction took that is a value of another type —
// a space's name or a file the request names is no title or city.
func (pl *planner) otherType(v any) bool {
	str, ok := v.(string)
	if !ok {
		return false
	}
	for _, sp := range pl.s.Config.Hints.Spaces {
		if strings.EqualFold(sp, str) {
			return true
		}
	}
	for _, o := range pl.in.Objects {
		if strings.EqualFold(o.Phrase, str) {
			return true
		}
	}
	return false
}

// wordsFor is the request without the text it gives to work on.
func (pl *planner) wordsFor() string {
	if pl.in.Body != "" {
		return strings.Replace(pl.request, pl.in.Body, "", 1)
	}
	return pl.request
}

// numberNear: the request puts a number next to the parameter's words
// ("in 50 words" for max_words).
func numberNear(request, name string) bool {
	for _, w := range nameWords(name) {
		if len(w) < 4 {
			continue
		}
		stem := strings.TrimSuffix(w, "s")
		if cachedRegexp(`(?i)\b\d+\s+` + regexp.QuoteMeta(stem) + `s?\b|\b` + regexp.QuoteMeta(stem) + `s?\s*(?:of|:|=)?\s*\d+\b`).MatchString(request) {
			return true
		}
	}
	return false
}

// everyFile adds list → foreach read for the folder's files and returns
// the reference to each one's text and the foreach source.
func (pl *planner) everyFile() (string, string, error) {
	in := pl.in
	f := in.Folder.Resolved()
	if f == nil {
		return "", "", errAmbiguous{choicesOf(*in.Folder)}
	}
	var lister *toolShape
	for name := range pl.entries {
		sh := pl.shape(name)
		if sh == nil || !sh.t.ReadOnly || sh.t.Destructive {
			continue
		}
		if _, ok := sh.roles["dir"]; !ok {
			continue
		}
		if paths, err := chains.OutputPaths(sh.t, 3, maxPartPaths); err == nil {
			for _, op := range paths {
				if len(op.Elems) == 3 && op.Elems[1].IsIndex && op.Elems[2].Key == "path" && (lister == nil || sh.t.Name < lister.t.Name) {
					lister = sh
				}
			}
		}
	}
	if lister == nil {
		return "", "", fmt.Errorf("no tool lists a folder's files")
	}
	ext := in.FileType
	if ext == "" {
		// The folder's files' type, when they share one.
		var only string
		for e, n := range pl.s.envIndexExts(f) {
			if n > 0 {
				if only != "" {
					only = "-"
					break
				}
				only = e
			}
		}
		if only != "-" {
			ext = only
		}
	}
	largs := map[string]any{"space": f.Space, "dir": f.Path}
	if in.FileType != "" {
		largs["pattern"] = "*." + in.FileType
	}
	if in.Recursive {
		largs["recursive"] = true
	}
	lid := pl.add(lister.t.Name, largs, "")
	r := pl.readerFor(ext)
	if r == nil {
		return "", "", fmt.Errorf("no tool reads %s files", ext)
	}
	rargs := map[string]any{}
	for _, p := range r.required {
		switch r.roles[p.Name] {
		case roleSpace:
			rargs[p.Name] = f.Space
		case rolePath:
			rargs[p.Name] = "{{item.path}}"
		default:
			return "", "", fmt.Errorf("%s needs %s", r.t.Name, p.Name)
		}
	}
	rid := pl.add(r.t.Name, rargs, "{{steps."+lid+".output.files}}")
	return "{{item.text}}", "{{steps." + rid + ".output}}", nil
}

// envIndexExts are the file types directly in folder f.
func (s *Selector) envIndexExts(f *understand.Entry) map[string]int {
	if s.Env == nil {
		return nil
	}
	env := s.Env("")
	if env.Index == nil {
		return nil
	}
	return env.Index.DirExts(f.Space, f.Path)
}

// PlanUnderstood plans a request in no-LLM mode from its interpretation.
// It answers (nil, nil) when the interpretation gives typed filling
// nothing to go on (the request is then planned as before); a
// *MissingSpaceError or *AmbiguousError when it names a space that is
// none, or several files equally well.
func (s *Selector) PlanUnderstood(ctx context.Context, caller, request string, cat chains.Catalog) (*PlanResult, error) {
	pr, _, err := s.planUnderstood(ctx, caller, request, cat, nil)
	return pr, err
}

// retrieved is one retrieval's candidates, kept for reuse by the no-LLM
// fallback when the query was the request itself.
type retrieved struct {
	query   string
	cands   []Candidate
	entries map[string]Entry
}

// planUnderstood is PlanUnderstood reusing have (a retrieval for the
// request, when the caller made one) and returning the retrieval it made.
func (s *Selector) planUnderstood(ctx context.Context, caller, request string, cat chains.Catalog, have *retrieved) (*PlanResult, *retrieved, error) {
	start := time.Now()
	in := s.Understand(caller, request)
	if in.MissingSpace != "" && in.Space == "" {
		var spaces []string
		if s.Env != nil {
			spaces = s.Env(caller).Spaces
		}
		sort.Strings(spaces)
		return nil, nil, &MissingSpaceError{Name: in.MissingSpace, Usual: in.MissingHint, Spaces: spaces}
	}
	cfg := s.Config.withDefaults()
	query := request
	if in.Body != "" {
		query = strings.Replace(request, in.Body, " text ", 1)
	}
	if at := in.ActionText(); at != "" {
		query += " " + at
	}
	var cands []Candidate
	var entries map[string]Entry
	if have != nil && have.query == query {
		cands, entries = have.cands, have.entries
	} else {
		var err error
		if cands, entries, err = s.candidates(ctx, caller, query, 2*cfg.TopK); err != nil {
			return nil, nil, err
		}
	}
	got := &retrieved{query: query, cands: cands, entries: entries}
	pl := &planner{s: s, env: s.envFor(caller), in: in, request: request, entries: entries, shapes: map[string]*toolShape{}}

	// The tool whose words cover the request's main action first (a
	// summary of a file is summarize's, reading it only a means).
	act := in.ActionWords()
	order := slices.Clone(cands)
	scores := make(map[string]float64, len(cands))
	if act != "" {
		q := coverageTerms(act)
		for _, c := range cands {
			scores[c.Name] = coverageOf(q, entries[c.Name].Tool)
		}
	}
	score := func(c Candidate) float64 { return scores[c.Name] }
	sort.SliceStable(order, func(i, j int) bool { return score(order[i]) > score(order[j]) })
	pr := &PlanResult{Mode: ModeNoLLM, Notice: NoLLMNotice, Candidates: cands}
	var firstErr error
	tried := 0
	for _, c := range order {
		if tried == noLLMTries+1 {
			break
		}
		sh := pl.shape(c.Name)
		if sh == nil {
			continue
		}
		if sh.t.Destructive && !in.ExplicitDestructive {
			continue // never the fallback
		}
		if c.Score[ScoreSimilarity] < cfg.MinSimilarity {
			continue // not similar enough at all (selection.min_similarity)
		}
		// A tool the request's words are about, or — held to values of
		// telling types for every argument — one they touch.
		covered := score(c) > 0 || c.Score[ScoreCoverage] >= cfg.MinCoverage
		if !covered && c.Score[ScoreCoverage] == 0 {
			continue
		}
		tried++
		err := pl.fill(sh, !covered)
		if ur, ok := err.(errUseReader); ok {
			err = pl.fill(ur.r, !covered)
		}
		if err == nil {
			break
		}
		pl.steps = nil
		var amb errAmbiguous
		if asAmb(err, &amb) && (score(c) > 0 || amb.err.Phrase != "which space") {
			return nil, got, amb.err
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if len(pl.steps) == 0 {
		if firstErr != nil {
			pr.Notice += "; " + firstErr.Error()
		}
		pr.Plan = json.RawMessage(`{"steps":[]}`)
		pr.Latency = time.Since(start)
		if !typed(in) {
			return nil, got, nil // nothing typed resolved: planned as before
		}
		return pr, got, nil
	}
	pr.Plan, _ = json.Marshal(map[string]any{"steps": pl.steps})
	c, err := chains.ParsePlan(pr.Plan)
	if err == nil && cat != nil {
		err = c.Validate(cat, caller)
	}
	if err != nil {
		return nil, got, fmt.Errorf("selector: the no-LLM plan is invalid: %w", err)
	}
	pr.Chain = c
	for _, st := range pl.steps {
		pr.Outline = append(pr.Outline, st["function"].(string))
	}
	if len(pl.steps) > 1 {
		pr.Notice = fmt.Sprintf("%s; planned as %d steps from what the tools take and give", NoLLMNotice, len(pl.steps))
	}
	pr.Latency = time.Since(start)
	return pr, got, nil
}

func asAmb(err error, out *errAmbiguous) bool {
	if a, ok := err.(errAmbiguous); ok {
		*out = a
		return true
	}
	return false
}

// noLLMUnderstood is no-LLM selection: from the request's interpretation
// when the selector has an Env (the first step of PlanUnderstood's plan),
// else, or when the interpretation gives nothing typed, noLLM.
func (s *Selector) noLLMUnderstood(ctx context.Context, caller, request string, cands []Candidate, entries map[string]Entry, cfg Config) (*Selection, error) {
	if s.Env != nil {
		pr, _, err := s.planUnderstood(ctx, caller, request, nil, &retrieved{query: request, cands: cands, entries: entries})
		if err != nil {
			return nil, err
		}
		if pr != nil {
			sel := &Selection{Mode: ModeNoLLM, Notice: pr.Notice, Candidates: cands, Function: grammar.NoneTool, Arguments: json.RawMessage(`{}`), Validation: "ok"}
			var plan struct {
				Steps []struct {
					Function  string          `json:"function"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"steps"`
			}
			_ = json.Unmarshal(pr.Plan, &plan)
			if len(plan.Steps) > 0 {
				st := plan.Steps[0]
				sel.Function, sel.Arguments, sel.Provider = st.Function, st.Arguments, entries[st.Function].Provider
				if len(plan.Steps) > 1 {
					sel.Notice += fmt.Sprintf("; this is the first of %d steps (airs plan shows them all)", len(plan.Steps))
				}
				if s.Validate != nil {
					if err := s.Validate(entries[st.Function].Tool, st.Arguments); err != nil {
						sel.Validation = err.Error()
					}
				}
			}
			return sel, nil
		}
	}
	return s.noLLM(cands, entries, request, cfg)
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
