package understand

// The files and folders a request names, resolved against the spaces the
// caller may read: the objects of an Interpretation.

import (
	"path"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// words are the analysed content words of s that may name a file.
func words(s string, extra map[string]bool) []string {
	var out []string
	for _, w := range reWordRE.FindAllString(s, -1) {
		lw := strings.ToLower(strings.Trim(w, "'-_"))
		if lw == "" || stop[lw] || extra[lw] {
			continue
		}
		out = append(out, nameTokens(lw)...) // as names are split: "bm25" → bm, 25
	}
	return out
}

var reSides = MustPattern(`(?i)\s+(?:and|with|to|against|versus|vs\.?|from)\s+`)
var reFolderRef = MustPattern(`(?i)\b(?:in|from|under|inside|within)\s+(?:the\s+|my\s+)?([\w.-]+(?:\s+[\w.-]+)?)(?:\s+(?:folder|directory|dir|subfolder))?\b|\b(?:the\s+|my\s+)?([\w.-]+)\s+(?:folder|directory|dir|subfolder)\b`)

func (in *Interpretation) spacesFor(env Env) []string {
	if in.Space != "" {
		return []string{in.Space}
	}
	return env.Spaces
}

// readObjects resolves the files and folders the request names.
func (in *Interpretation) readObjects(unq, lower string, env Env) {
	if env.Index == nil {
		env.Index = NewFileIndex()
	}
	spaces := in.spacesFor(env)
	rest := unq
	// Named files first.
	for _, loc := range reFile.FindAllStringIndex(unq, -1) {
		env.yield()
		name := strings.TrimPrefix(unq[loc[0]:loc[1]], "./")
		o := Object{Phrase: name, Named: true}
		for _, sp := range spaces {
			o.Matches = append(o.Matches, env.Index.Named(sp, name)...)
		}
		o.Matches = env.Index.Distinct(o.Matches)
		if len(o.Matches) > 1 {
			// The same name in several folders: a path match beats a base name.
			var exact []*Entry
			for _, e := range o.Matches {
				if strings.EqualFold(e.Path, name) {
					exact = append(exact, e)
				}
			}
			if len(exact) > 0 {
				o.Matches = exact
			}
		}
		in.Objects = append(in.Objects, o)
		rest = rest[:loc[0]] + strings.Repeat(" ", loc[1]-loc[0]) + rest[loc[1]:]
	}
	spaceWords := map[string]bool{}
	for _, sp := range env.Spaces {
		spaceWords[strings.ToLower(sp)] = true
	}
	if in.MissingSpace != "" {
		spaceWords[in.MissingSpace] = true
	}
	// The folder the request works in: "in the papers folder", "under quotes".
	env.yield()
	listing := in.Has(List) || reEvery.MatchString(unq)
	for _, m := range reFolderRef.FindAllStringSubmatch(rest, -1) {
		env.yield()
		phrase := m[1]
		if phrase == "" {
			phrase = m[2]
		} else if !listing && !cachedPattern(`(?i)\b(?:folder|directory|dir|subfolder)\b`).MatchString(m[0]) {
			continue // "in the cover letter" names a file, not a folder
		}
		ws := words(phrase, spaceWords)
		if len(ws) == 0 {
			continue
		}
		ms := env.Index.Search(spaces, ws, "", true)
		if len(ms) == 0 && len(ws) > 1 {
			ms = env.Index.Search(spaces, ws[:1], "", true)
		}
		if len(ms) > 0 {
			o := Object{Phrase: strings.TrimSpace(phrase), Dir: true, Matches: ms}
			in.Folder = &o
			break
		}
	}
	if in.Has(Compare) && len(in.Objects) == 1 && in.Folder == nil {
		in.compareWithNamed(unq, rest, spaceWords, spaces, env)
		return
	}
	if in.Folder == nil && in.Has(List) && len(in.Objects) == 0 {
		// "list the recipes": a folder named without the word "folder".
		if ws := words(afterAction(rest), spaceWords); len(ws) > 0 {
			ms := env.Index.SearchWith(spaces, ws, "", true, func(e *Entry, stemHits, _ int, cover float64) bool { return stemHits > 0 && cover == 1 })
			if len(ms) > 0 {
				in.Folder = &Object{Phrase: strings.TrimSpace(afterAction(rest)), Dir: true, Matches: ms}
			}
		}
	}
	if len(in.Objects) > 0 || !in.needsFile() {
		return
	}
	// Described files: "the 2025 acme quote", "the meeting notes".
	desc := rest
	if in.Folder != nil {
		desc = strings.Replace(desc, in.Folder.Phrase, " ", 1)
	}
	ext := in.FileType
	extra := map[string]bool{}
	for k := range spaceWords {
		extra[k] = true
	}
	env.yield()
	if in.Has(Compare) {
		// Each side of "compare A and B" names a file.
		sides := reSides.Split(afterAction(desc), -1)
		if len(sides) == 2 {
			wss := [][]string{words(sides[0], extra), words(sides[1], extra)}
			for i := range wss {
				// "the 2024 and 2025 acme quotes", "the 2023 lease with
				// the 2024 one": a side that says only which one (a
				// number) names the other side's kind of file.
				if o := wss[1-i]; len(wss[i]) > 0 && allNumbers(wss[i]) && !allNumbers(o) {
					for _, w := range o {
						if !isNumber(w) {
							wss[i] = append(wss[i], w)
						}
					}
				}
			}
			var objs []Object
			for i, sd := range sides {
				ws := wss[i]
				if len(ws) == 0 {
					break
				}
				ms := env.Index.SearchWith(spaces, ws, ext, false, describes(strings.ToLower(sd), true))
				if len(ms) == 0 {
					break
				}
				objs = append(objs, Object{Phrase: strings.TrimSpace(sd), Matches: ms})
			}
			if len(objs) == 2 {
				in.Objects = objs
				return
			}
		}
	}
	env.yield()
	ws := words(desc, extra)
	if len(ws) == 0 {
		return
	}
	env.yield()
	ms := env.Index.SearchWith(spaces, ws, ext, false, describes(strings.ToLower(desc), len(in.Actions) > 0))
	env.yield()
	if len(ms) == 0 {
		return
	}
	phrase := strings.TrimSpace(afterAction(desc))
	if in.Has(Compare) && len(ms) == 2 {
		// "compare the two acme quotes": both are the objects.
		in.Objects = []Object{{Phrase: phrase, Matches: ms[:1]}, {Phrase: phrase, Matches: ms[1:]}}
		return
	}
	if in.Folder != nil && (in.Every || len(ms) > 1) {
		return // the folder's files, not one of them
	}
	if len(ms) > 1 && !in.Has(Compare) && plural(desc, ms) {
		in.readPlural(phrase, ms, env.Index)
		return
	}
	in.Objects = append(in.Objects, Object{Phrase: phrase, Matches: ms})
}

// readPlural records files named in the plural as each meant: the folder
// they fill, when they are all of one folder's files (then listed, as
// "every paper in the papers folder"), else each file on its own.
func (in *Interpretation) readPlural(phrase string, ms []*Entry, x *FileIndex) {
	dir := path.Dir(ms[0].Path)
	// A deletion or a move names each file it touches: each is confirmed
	// by its name, never a folder's listing that may have grown.
	same := dir != "." && !in.ExplicitDestructive
	for _, e := range ms[1:] {
		same = same && e.Space == ms[0].Space && path.Dir(e.Path) == dir
	}
	if same {
		n := 0
		for _, c := range x.DirExts(ms[0].Space, dir) {
			n += c
		}
		if n == len(ms) {
			for _, f := range x.Named(ms[0].Space, dir) {
				if f.Dir {
					in.Folder = &Object{Phrase: phrase, Dir: true, Matches: []*Entry{f}}
					in.Every = true
					return
				}
			}
		}
	}
	in.All = true
	for _, e := range ms {
		in.Objects = append(in.Objects, Object{Phrase: phrase, Matches: []*Entry{e}})
	}
}

// plural reports whether the words that named the files ms name them in
// the plural: "all", "every" or "each", or a plural noun ("the papers",
// "the leases") that none of their own names spells ("the notes" is a
// name when meeting-notes.md is the file).
func plural(desc string, ms []*Entry) bool {
	if reEvery.MatchString(desc) {
		return true
	}
	for _, w := range reWordRE.FindAllString(strings.ToLower(desc), -1) {
		if len(w) < 4 || !strings.HasSuffix(w, "s") || strings.HasSuffix(w, "ss") || stop[w] {
			continue
		}
		st := normToken(w)
		if st == w {
			continue
		}
		named, spelt := false, false
		for _, e := range ms {
			if slicesContains(e.stem, st) || slicesContains(e.dirs, st) {
				named = true
			}
			if strings.Contains(e.base, w) {
				spelt = true
			}
		}
		if named && !spelt {
			return true
		}
	}
	return false
}

func (in *Interpretation) needsFile() bool {
	if in.Body != "" {
		return false
	}
	if len(in.Actions) == 0 {
		return true // "translate the meeting notes": a tool may take its text
	}
	for _, a := range in.Actions {
		if a.NeedsFile() {
			return true
		}
	}
	return false
}

// describes is the acceptance rule for a described file: the words name
// at least half of its own name, or two of its words (name or folders), or
// one word the request uses as a definite noun ("the lease", "my budget").
// A one-word name met by one word of the request counts only when the
// request asks for an action (acted): "set the thermostat" names no
// settings file.
func describes(lower string, acted bool) func(e *Entry, stemHits, dirHits int, cover float64) bool {
	definite := map[string]bool{}
	for _, m := range reDefinite.FindAllStringSubmatch(lower, -1) {
		for _, t := range nameTokens(m[1]) {
			definite[t] = true
		}
	}
	return func(e *Entry, stemHits, dirHits int, cover float64) bool {
		if stemHits+dirHits >= 2 || acted && stemHits > 0 && cover == 1 {
			return true
		}
		for _, t := range e.stem {
			if definite[t] {
				return true
			}
		}
		for _, t := range e.dirs {
			if definite[t] {
				return true
			}
		}
		return false
	}
}

var reDefinite = MustPattern(`\b(?:the|my|this|that|our|each|every|both)\s+(?:(?:two|three|four|both|\d+)\s+)?([\p{L}\p{N}]+)`)

// afterAction is the text after the first action word (the object's words).
func afterAction(s string) string {
	first := len(s)
	end := 0
	t := &haystack{s: s}
	for _, p := range actionPhrases {
		if !p.re.pre.may(t) {
			continue
		}
		if loc := p.re.FindStringIndex(s); loc != nil && loc[0] < first {
			first, end = loc[0], loc[1]
		}
	}
	if first == len(s) {
		return s
	}
	return s[end:]
}

// Words are the analysed words of a request as the tool index reads them.
func Words(s string) []string { return embeddings.Terms(s) }

// compareWithNamed finds the file a comparison describes beside the one it
// names ("how does the draft differ from final.txt"), in the order the
// request says them.
func (in *Interpretation) compareWithNamed(unq, rest string, spaceWords map[string]bool, spaces []string, env Env) {
	ws := words(rest, spaceWords)
	if len(ws) == 0 {
		return
	}
	named := in.Objects[0]
	ms := env.Index.SearchWith(spaces, ws, in.FileType, false, describes(strings.ToLower(rest), true))
	var other []*Entry
	for _, e := range ms {
		if !slicesContainsEntry(named.Matches, e) {
			other = append(other, e)
		}
	}
	if len(other) == 0 {
		return
	}
	o := Object{Phrase: strings.TrimSpace(afterAction(rest)), Matches: other}
	// The described file comes first when its first word comes before the
	// named file in the request.
	first := len(unq)
	for _, loc := range reWordRE.FindAllStringIndex(rest, -1) {
		w := strings.ToLower(rest[loc[0]:loc[1]])
		if t := nameTokens(w); len(t) > 0 && slicesContains(ws, t[0]) {
			first = loc[0]
			break
		}
	}
	if first < strings.Index(unq, named.Phrase) {
		in.Objects = []Object{o, named}
		return
	}
	in.Objects = append(in.Objects, o)
}

func slicesContainsEntry(es []*Entry, e *Entry) bool {
	for _, x := range es {
		if x == e || x.Space == e.Space && x.Path == e.Path {
			return true
		}
	}
	return false
}

func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return w != ""
}

func allNumbers(ws []string) bool {
	for _, w := range ws {
		if !isNumber(w) {
			return false
		}
	}
	return true
}
