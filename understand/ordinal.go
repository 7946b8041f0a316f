package understand

// Ordinals over files ("the second paper", "the newest quote", "the last
// pdf in the papers folder"): several files fit the words, and the
// ordinal says which one is meant. A person counts files as a listing
// shows them, by name; "newest" and "oldest" are about time, and a name
// that carries a date ("acme-2025.pdf") says its time better than a
// modification time a copy or a checkout resets.

import (
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// An Ordinal picks one file of several: the N-th by name (counted from
// the end when Last), or the newest or oldest by time.
type Ordinal struct {
	Word string // as the request says it ("second", "newest")
	N    int    // 1-based position by name; 0 for a pick by time
	Last bool   // N counts from the end ("last" is N 1 from the end)
	// ByTime: newest first when Newest, else oldest first.
	ByTime bool
	Newest bool
}

var reOrdinal = MustPattern(`(?i)\b(?:the|my|your|our)\s+(?:very\s+)?(first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th|second[\s-]+to[\s-]+last|last|latest|newest|most\s+recent|oldest|earliest)\b`)

var ordinalWords = map[string]Ordinal{
	"first": {N: 1}, "1st": {N: 1}, "second": {N: 2}, "2nd": {N: 2}, "third": {N: 3}, "3rd": {N: 3},
	"fourth": {N: 4}, "4th": {N: 4}, "fifth": {N: 5}, "5th": {N: 5},
	"last": {N: 1, Last: true}, "second to last": {N: 2, Last: true},
	"latest": {ByTime: true, Newest: true}, "newest": {ByTime: true, Newest: true}, "most recent": {ByTime: true, Newest: true},
	"oldest": {ByTime: true}, "earliest": {ByTime: true},
}

// readOrdinals finds the ordinals a request says (at most two: "compare
// the first and the last paper") and blanks their words out of s (so that
// "the second paper" names papers, not "second").
func readOrdinals(s string) ([]Ordinal, string) {
	var out []Ordinal
	for _, m := range reOrdinal.FindAllStringSubmatchIndex(s, 2) {
		word := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(s[m[2]:m[3]], "-", " ")), " "))
		o, ok := ordinalWords[word]
		if !ok {
			continue
		}
		o.Word = word
		out = append(out, o)
		s = s[:m[2]] + strings.Repeat(" ", m[3]-m[2]) + s[m[3]:]
	}
	return out, s
}

// pick chooses one of es (sorted by space and path), and says how; nil
// when the ordinal is past the files' count.
func (o Ordinal) pick(es []*Entry, x *FileIndex) (*Entry, string) {
	if len(es) == 0 {
		return nil, ""
	}
	if !o.ByTime {
		byName := append([]*Entry(nil), es...)
		sort.SliceStable(byName, func(i, j int) bool {
			return strings.ToLower(byName[i].Path) < strings.ToLower(byName[j].Path)
		})
		i := o.N - 1
		if o.Last {
			i = len(byName) - o.N
		}
		if i < 0 || i >= len(byName) {
			return nil, ""
		}
		return byName[i], "the " + o.Word + " of the " + strconv.Itoa(len(es)) + " that fit, by name"
	}
	// By the dates their names carry when every one carries a different
	// one; else by modification time.
	keys := make([]string, len(es))
	dated := true
	seen := map[string]bool{}
	for i, e := range es {
		keys[i] = nameDate(path.Base(e.Path))
		if keys[i] == "" || seen[keys[i]] {
			dated = false
		}
		seen[keys[i]] = true
	}
	how := "the date in its name"
	if !dated {
		how = "modification time"
		for i, e := range es {
			keys[i] = ""
			if t, ok := x.ModTime(e); ok {
				keys[i] = t.UTC().Format(time.RFC3339Nano)
			}
		}
	}
	idx := make([]int, len(es))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		if ka != kb {
			if o.Newest {
				return ka > kb
			}
			return ka < kb
		}
		return es[idx[a]].Path < es[idx[b]].Path
	})
	return es[idx[0]], "the " + o.Word + " of the " + strconv.Itoa(len(es)) + " that fit, by " + how
}

// reNameDate is a year, or a date, in a file's name: 2025, 2025-03,
// 2025-03-14, 20250314.
var reNameDate = MustPattern(`(?:^|[^0-9])((?:19|20)\d\d)(?:[-_.]?(0[1-9]|1[0-2])(?:[-_.]?([0-2]\d|3[01]))?)?(?:[^0-9]|$)`)

// nameDate is the date a file's name carries, as YYYYMMDD (a missing month
// or day is 00), or "".
func nameDate(base string) string {
	m := reNameDate.FindStringSubmatch(base)
	if m == nil {
		return ""
	}
	d := m[1]
	for _, p := range m[2:4] {
		if p == "" {
			p = "00"
		}
		d += p
	}
	return d
}

// ModTime is the modification time of e's file, when the index knows its
// space's folder and the file is there.
func (x *FileIndex) ModTime(e *Entry) (time.Time, bool) {
	x.mu.RLock()
	root, ok := x.roots[e.Space]
	x.mu.RUnlock()
	if !ok {
		return time.Time{}, false
	}
	fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(e.Path)))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// FilesIn are the files directly in folder dir of space, by path.
func (x *FileIndex) FilesIn(space, dir string) []*Entry {
	dir = cleanRel(dir)
	if dir == "" {
		dir = "."
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	si := x.spaces[space]
	if si == nil || len(si.exts[dir]) == 0 {
		return nil
	}
	var out []*Entry
	for _, e := range si.list {
		if e != nil && !e.Dir && path.Dir(e.Path) == dir {
			out = append(out, e)
		}
	}
	sortEntries(out)
	return out
}

// reQuestion is a request put as a question (or "tell me …"), perhaps
// after the document it is about ("in the 2025 quote, what …"), which asks
// about what a document it names says when it names one.
var reQuestion = MustPattern(`(?i)^\s*(?:(?:in|from|according\s+to|looking\s+at)\s+[^,?]{1,80},\s*)?(?:(?:please|so|and|ok|okay|hey)[\s,]+)*(?:what|what's|whats|how|how's|when|where|who|which|why|is|are|does|do|did|can|could|tell\s+me|find\s+out)\b`)

// reTypeOne is a file type said of one file ("the last pdf").
var reTypeOne = MustPattern(`(?i)\b(pdf|csv|markdown|md|txt|json|docx?|xlsx?|html?|png|jpe?g|spreadsheet|image|picture|photo|presentation)\b`)

// applyOrdinal makes the one file the ordinal picks the request's object:
// among the files its words fit equally, or, when it names only a folder
// (or only a type), among the folder's files (of the type).
func (in *Interpretation) applyOrdinals(ords []Ordinal, unq string, env Env) {
	o := ords[0]
	if env.Index == nil {
		return
	}
	kind := in.FileType
	if kind == "" {
		if m := reTypeOne.FindStringSubmatch(unq); m != nil {
			kind = normExt(m[1])
		}
	}
	ofKind := func(es []*Entry) []*Entry {
		if kind == "" {
			return es
		}
		var out []*Entry
		for _, e := range es {
			if e.ext == kind || sameKind(kind, e.ext) {
				out = append(out, e)
			}
		}
		return out
	}
	var cands []*Entry
	phrase := ""
	switch {
	case len(ords) == 2 && len(in.Objects) == 2 && !in.Objects[0].Dir && !in.Objects[1].Dir:
		// "diff the newest lease with the oldest one": the files the
		// comparison found are the ones both ordinals count over.
		cands = env.Index.Distinct(append(append([]*Entry(nil), in.Objects[0].Matches...), in.Objects[1].Matches...))
		phrase = in.Objects[0].Phrase
	case len(in.Objects) == 1 && !in.Objects[0].Dir && len(in.Objects[0].Matches) > 1:
		cands, phrase = in.Objects[0].Matches, in.Objects[0].Phrase
	case len(in.Objects) == 0 && in.Folder != nil && in.Folder.Resolved() != nil:
		f := in.Folder.Resolved()
		cands, phrase = ofKind(env.Index.FilesIn(f.Space, f.Path)), in.Folder.Phrase
	case len(in.Objects) == 0 && in.Folder == nil && kind != "" && in.needsFile():
		for _, sp := range in.spacesFor(env) {
			cands = append(cands, env.Index.FilesOfType(sp, kind)...)
		}
		cands, phrase = env.Index.Distinct(cands), kind
	}
	if len(cands) < 2 {
		if len(cands) == 1 && len(in.Objects) == 0 {
			in.Objects = []Object{{Phrase: phrase, Matches: cands}}
			in.Every, in.All = false, false
		}
		return
	}
	phrase = strings.Join(strings.Fields(phrase), " ")
	if len(ords) == 2 {
		// Two ordinals ("compare the first and the last paper", "read
		// the first and the second paper"): one file each, two different
		// files; compared, or each gets the call.
		a, howA := o.pick(cands, env.Index)
		b, howB := ords[1].pick(cands, env.Index)
		if a != nil && b != nil && a != b {
			in.Objects = []Object{{Phrase: phrase, Matches: []*Entry{a}, Chose: howA}, {Phrase: phrase, Matches: []*Entry{b}, Chose: howB}}
			in.Every, in.All = false, !in.Has(Compare) && len(in.Parts) == 1
			in.Ordinal = &o
		}
		return
	}
	e, how := o.pick(cands, env.Index)
	if e == nil {
		return
	}
	in.Objects = []Object{{Phrase: phrase, Matches: []*Entry{e}, Chose: how}}
	in.Every, in.All = false, false
	in.Ordinal = &o
}

// FilesOfType are the files of space whose type is ext, by path.
func (x *FileIndex) FilesOfType(space, ext string) []*Entry {
	x.mu.RLock()
	defer x.mu.RUnlock()
	si := x.spaces[space]
	if si == nil {
		return nil
	}
	var out []*Entry
	for _, e := range si.list {
		if e != nil && !e.Dir && (e.ext == ext || sameKind(ext, e.ext)) {
			out = append(out, e)
		}
	}
	sortEntries(out)
	return out
}

// namingSpan is the part of s whose words name the files ms ("what does
// the quote cost for enterprise" → "the quote"): from the first word that
// is a word of their names or folders to the last, with an article or
// possessive just before it. "" when no word of s names them.
func namingSpan(s string, ms []*Entry) string {
	named := map[string]bool{}
	for _, e := range ms {
		for _, t := range e.tokens() {
			named[t] = true
		}
	}
	first, last := -1, -1
	for _, loc := range reWordRE.FindAllStringIndex(s, -1) {
		w := strings.ToLower(s[loc[0]:loc[1]])
		if stop[w] {
			continue
		}
		for _, t := range nameTokens(w) {
			if named[t] {
				if first < 0 {
					first = loc[0]
				}
				last = loc[1]
				break
			}
		}
	}
	if first < 0 {
		return ""
	}
	if m := reArticleBefore.FindStringIndex(s[:first]); m != nil {
		first = m[0]
	}
	return s[first:last]
}

var reArticleBefore = MustPattern(`(?i)\b(?:the|my|our|your|this|that)\s+$`)

// IsQuestion reports whether a request is put as a question: a question
// word first (perhaps after the document it is about), or a question mark
// last.
func IsQuestion(s string) bool {
	return reQuestion.MatchString(s) || strings.HasSuffix(strings.TrimSpace(s), "?")
}
