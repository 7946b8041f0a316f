package selector

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/understand"
)

// Filling a tool's arguments by type from the interpretation, with the
// steps that produce what it takes (reading a file, listing a folder).

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
	steps         []PlanStep
}

// writes reports whether a step of the plan calls a tool that is not
// read-only.
func (pl *planner) writes() bool {
	for _, st := range pl.steps {
		if sh := pl.shape(st.Function); sh != nil && !sh.t.ReadOnly {
			return true
		}
	}
	return false
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
	pl.steps = append(pl.steps, PlanStep{ID: id, Function: tool, Arguments: raw, Foreach: foreach})
	return id
}

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
// argument has no value of its type in the request. Files the request
// names in the plural (Interpretation.All) each get the call, a file a
// reader does not take going to the reader of its type.
func (pl *planner) fill(sh *toolShape, strict bool) error {
	pl.steps = nil
	if !pl.in.All {
		return pl.fillOne(sh, strict)
	}
	all := pl.in
	defer func() { pl.in = all }()
	for _, o := range all.Files() {
		one := *all
		one.All, one.Objects = false, []understand.Object{o}
		pl.in = &one
		n := len(pl.steps)
		err := pl.fillOne(sh, strict)
		if ur, ok := err.(errUseReader); ok {
			pl.steps = pl.steps[:n]
			err = pl.fillOne(ur.r, strict)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fillOne is fill for one reading of the request, adding to the steps
// planned so far.
func (pl *planner) fillOne(sh *toolShape, strict bool) error {
	in := pl.in
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
				if sh.isReader() && needText == 0 && len(sh.required) <= 2 {
					// Reading every file of a folder: list, then read each
					// with the reader of their type.
					_, _, err := pl.everyFile()
					return err
				}
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
		case p.Name == "pattern" && p.is("string") && in.NameHas != "" && !sh.root.Required[p.Name]:
			args[p.Name] = understand.NameGlob(in.NameHas, in.FileType)
		case p.Name == "pattern" && p.is("string") && in.FileType != "" && !sh.root.Required[p.Name]:
			args[p.Name] = understand.Glob(in.FileType)
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
	switch {
	case in.NameHas != "":
		largs["pattern"] = understand.NameGlob(in.NameHas, in.FileType)
	case in.FileType != "":
		largs["pattern"] = understand.Glob(in.FileType)
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
