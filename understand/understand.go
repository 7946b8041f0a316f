// Package understand reads a request once, without a model, into one typed
// interpretation: the actions it asks for (read, list, summarize, compare,
// calculate, delete …), whether it explicitly asks for something
// destructive, the typed values it carries (an arithmetic expression in
// the calculator's grammar, a text given to work on), the files and
// folders it names resolved against the spaces the caller may read (a
// FileIndex, never a walk per request), and its parts. Selection, argument
// filling, planning, the "no tool fits" decision and the recommender read
// this one interpretation instead of each reading the text again.
package understand

import (
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// Action is what a request asks done, in one canonical word; the words
// are the ones tool descriptions use, so Coverage of them finds the tool.
type Action string

const (
	Read      Action = "read"
	Extract   Action = "extract"
	List      Action = "list"
	Summarize Action = "summarize"
	Compare   Action = "compare"
	Calculate Action = "calculate"
	Delete    Action = "delete"
	Move      Action = "move"
	Write     Action = "write"
)

// Destructive reports whether the action destroys or replaces data.
func (a Action) Destructive() bool { return a == Delete || a == Move || a == Write }

// NeedsFile reports whether the action works on a file the request names.
func (a Action) NeedsFile() bool {
	switch a {
	case Read, Extract, Summarize, Compare, Delete, Move:
		return true
	}
	return false
}

// Env is what a request is read against: the spaces the caller may read
// and the index of their files.
type Env struct {
	Spaces []string
	Index  *FileIndex
	// Folders are the usual folder names a space could be ("documents":
	// "~/Documents"): named in a request but not configured, they are a
	// missing space, said plainly, never replaced by another.
	Folders map[string]string
	// Yield, when set, is called between the steps of reading: a long
	// request is heavy work, and gives way to light work there
	// (internal/turns).
	Yield func()
}

func (e Env) yield() {
	if e.Yield != nil {
		e.Yield()
	}
}

// DefaultFolders are the usual folders a person calls by name.
var DefaultFolders = map[string]string{
	"documents": "~/Documents", "downloads": "~/Downloads", "desktop": "~/Desktop",
	"pictures": "~/Pictures", "photos": "~/Pictures", "music": "~/Music", "videos": "~/Videos",
}

// Object is a file or folder a request names.
type Object struct {
	Phrase string // as the request wrote it (a name, or the words that name it)
	Named  bool   // written as a file name (report.pdf), not described
	Dir    bool
	// Matches are the entries it names: one when resolved, several when
	// equally good (the caller must choose), none when it names nothing.
	Matches []*Entry
}

// Resolved is the one entry the object names, or nil.
func (o Object) Resolved() *Entry {
	if len(o.Matches) == 1 {
		return o.Matches[0]
	}
	return nil
}

// Interpretation is a request read once.
type Interpretation struct {
	Text    string
	Actions []Action
	// Explicit: the request itself asks for a destructive action (delete,
	// remove, erase, move, overwrite, get rid of …), not negated.
	ExplicitDestructive bool
	// Expression is the arithmetic it states, in the calculator's grammar.
	Expression string
	// Body is the text it gives to work on ("summarize this: …").
	Body string
	// Objects are the files (then folders) it names, in order.
	Objects []Object
	Folder  *Object // the folder it works in, when it names one
	// Space is the space it names; MissingSpace a usual folder it names
	// that is no space (with MissingHint, its usual place).
	Space        string
	MissingSpace string
	MissingHint  string
	// Every: it asks for each file of a folder ("every paper in …").
	Every bool
	// All: the files it names in the plural ("the leases", "all the
	// notes") are each meant, not one of them to choose: Objects holds
	// each, resolved. (Files that fill a folder of their own make it
	// Every over that folder instead.)
	All bool
	// Parts are the request cut where it orders tasks (sentences, "then"):
	// a plan gives each a step.
	Parts []string
	// FileType is the type its words ask for ("the pdfs" → pdf).
	FileType  string
	Recursive bool
	// Verb is the verb the request leads with when it is one of the
	// services' verbs none of the actions above is ("send", "book",
	// "play", "translate" …): a tool the request does not name by its
	// words must at least say that verb to serve it.
	Verb string
}

// Has reports whether the interpretation holds action a.
func (in *Interpretation) Has(a Action) bool {
	for _, x := range in.Actions {
		if x == a {
			return true
		}
	}
	return false
}

// Main is the action the request leads with: the first non-destructive
// one it asks for unless it asks explicitly for a destructive one.
func (in *Interpretation) Main() Action {
	if len(in.Actions) == 0 {
		return ""
	}
	return in.Actions[0]
}

// ActionWords are the words a tool serving the main action uses: reading
// a file and extracting its text are one action to a person.
func (in *Interpretation) ActionWords() string {
	switch in.Main() {
	case Read, Extract:
		return "read extract text"
	}
	return string(in.Main())
}

// ActionText is the canonical words of the actions, for matching tools.
func (in *Interpretation) ActionText() string {
	var b []string
	for _, a := range in.Actions {
		b = append(b, string(a))
	}
	return strings.Join(b, " ")
}

// Files are the objects that are files.
func (in *Interpretation) Files() []Object {
	var out []Object
	for _, o := range in.Objects {
		if !o.Dir {
			out = append(out, o)
		}
	}
	return out
}

var (
	reBody = MustPattern(`(?is)^(?:[^:\n]{0,80}?\b(?:summari[sz]e|sum\s+up|tl;?\s*dr|tldr|gist|recap|condense|shorten|boil\s+down|key\s+points|main\s+points|summary)\b[^:\n]{0,40}?)\s*[:\n]\s*(.+)$`)
	reTLDR = MustPattern(`(?is)^\s*(.+?)\s*(?:\n|\s)+(?:tl;?\s*dr|tldr)\s*[?.!]*\s*$`)
	// reFile is a file name as a request writes it.
	reFile       = MustPattern(`[\w./~-]*\w\.(?:pdf|txt|md|markdown|csv|json|yaml|yml|docx?|xlsx?|pptx?|png|jpe?g|html?|go|py|js|log|rtf|odt)\b`)
	reQuoted     = MustPattern(`'[^']+'|"[^"]+"|“[^”]+”`)
	reWordRE     = MustPattern(`[\p{L}\p{N}][\p{L}\p{N}'_-]*`)
	reEvery      = MustPattern(`(?i)\b(?:every|each|all(?:\s+(?:of\s+)?the)?|all\s+my)\b`)
	reTypeW      = MustPattern(`(?i)\b(pdf|txt|csv|md|markdown|json|ya?ml|html?|docx?|xlsx?|log|text|image|png|jpe?g)(?:s|\s+files?|\s+documents?|\s+docs?)\b`)
	reRecur      = MustPattern(`(?i)\b(?:recursive(?:ly)?|sub-?folders?|sub-?directories|at\s+any\s+depth|everywhere|all\s+the\s+way\s+down|including\s+subfolders)\b`)
	reNounBefore = MustPattern(`(?i)\b(?:the|my|a|your|our|this|that|todo|to-do|shopping|reading|wish|packing|check)\s+$`)
	reNeg        = MustPattern(`(?i)\b(?:don'?t|do\s+not|never|not|without|no\s+need\s+to|rather\s+than|instead\s+of|before|after|until|unless|in\s+case|so\s+(?:that\s+)?(?:i|we)\s+can|whether\s+to|should\s+i|which|were|was|been|got|the|(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:about|going|planning)\s+to|i'?ll|i\s+will|i\s+might|i\s+may)\s+(?:\w+\s+){0,2}$`)
)

// reServiceVerb is a request that leads with a verb of a service no
// action of this package names (after "please", "can you" …).
var reServiceVerb = MustPattern(`(?i)^\s*(?:(?:please|pls|kindly|hey|ok|okay|can\s+you|could\s+you|would\s+you|will\s+you)[\s,]+)*(send|e-?mail|mail|text|message|post|tweet|book|reserve|buy|order|purchase|pay|play|call|phone|schedule|remind|set|create|make|translate|convert|share|upload|download|install|start|stop|turn|switch|invite|cancel|ping|notify)\b`)

// action words, by canonical action. Longer phrases first within a kind.
var actionPhrases = []struct {
	a  Action
	re Pattern
}{
	{Delete, MustPattern(`(?i)\b(?:delete|deleting|remove|removing|erase|erasing|trash|wipe|discard|shred|destroy|get\s+rid\s+of|throw\s+(?:away|out)|rm|unlink|bin)\b`)},
	{Move, MustPattern(`(?i)\b(?:move|moving|rename|renaming|relocate)\b`)},
	{Write, MustPattern(`(?i)\b(?:overwrite|overwriting|replace\s+the\s+contents|write\s+over)\b`)},
	{Compare, MustPattern(`(?i)\b(?:compare|comparing|comparison|diff|contrast|(?:added|removed|changed|deleted|new)\s+(?:\w+\s+)?between|what(?:'s|\s+is|\s+has)?\s+changed|what\s+changed|differences?\s+between|how\s+(?:do|does)\s+.+\s+differ|differ(?:ence)?s?|versus|vs\.?)\b`)},
	{Summarize, MustPattern(`(?i)\bwhat(?:'s|\s+is|\s+are)\s+(?:\S+\s+){0,6}?about\s*[?.!]*\s*$|\b(?:summari[sz]e|summari[sz]ing|summary|sum\s+up|tl;?\s*dr|tldr|gist|recap|condense|shorten|boil\s+down|key\s+points|main\s+points|overview\s+of|in\s+a\s+nutshell|brief\s+me|short\s+version)\b`)},
	{List, MustPattern(`(?i)\b(?:list|listing|enumerate|ls|(?:what|which)\s+(?:(?:pdf|markdown|md|text|txt|csv|json|ya?ml|html?|image|log)\s+)?(?:files|documents|pdfs|papers)|show\s+(?:me\s+)?(?:all\s+)?(?:the\s+|my\s+)?(?:(?:pdf|markdown|md|text|txt|csv|json|ya?ml|html?|image|log)\s+)?(?:files|documents|pdfs|papers|contents\s+of\s+(?:the\s+|my\s+)?\w+\s+folder)|what'?s\s+in\s+(?:the\s+|my\s+)?\w+\s+(?:folder|directory|space)|find\s+(?:all\s+)?(?:the\s+|my\s+)?(?:files|pdfs|documents|papers)|how\s+many\s+(?:files|pdfs|documents|papers))\b`)},
	{Extract, MustPattern(`(?i)\b(?:extract|extracting|pull\s+(?:out\s+)?the\s+text|get\s+the\s+text|text\s+(?:of|from|in))\b`)},
	{Read, MustPattern(`(?i)\b(?:read|reading|open|show|display|view|print|cat|contents?\s+of|what\s+(?:does|did|do)\s+.+\s+say|what'?s\s+(?:in|inside)|what\s+is\s+(?:in|inside)|look\s+at|see\s+what|let\s+me\s+see|see)\b`)},
	{Calculate, MustPattern(`(?i)\b(?:calculate|compute|evaluate|work\s+out|how\s+much\s+is|solve)\b`)},
}

// stop are words that never name a file.
var stop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the a an my our your this that these those it its of in on at to for from with and or
		me please can could would you i we what whats what's which is are was do does did say says said show tell give
		file files document documents doc docs folder folders directory dir space text content contents version copy
		called named inside into about between both two all every each one ones then also just now new old latest
		read open extract summarize summarise summary compare diff list delete remove erase get rid trash move
		pdf pdfs txt md markdown there here look see find whats some any let lets want need like up out over
		display view print cat gist tldr recap key points main short brief overview condense shorten differences
		difference changed change against versus vs how many much words word sentences under within`) {
		stop[w] = true
	}
}

// Parse reads a request against env.
func Parse(text string, env Env) *Interpretation {
	in := &Interpretation{Text: text, Parts: SplitParts(text)}
	env.yield()
	head := text
	if m := reBody.FindStringSubmatch(text); m != nil && len(strings.TrimSpace(m[1])) > 0 {
		in.Body = strings.TrimSpace(m[1])
		head = text[:len(text)-len(m[1])]
	} else if m := reTLDR.FindStringSubmatch(text); m != nil && len(strings.Fields(m[1])) >= 8 {
		in.Body = strings.TrimSpace(m[1])
		head = "tl;dr"
	}
	// Quoted texts are values, not words of the request.
	unq := reQuoted.ReplaceAllStringFunc(head, func(m string) string { return strings.Repeat(" ", len(m)) })
	lower := strings.ToLower(unq)

	env.yield()
	in.readActions(unq, env)
	if m := reServiceVerb.FindStringSubmatch(unq); m != nil {
		in.Verb = strings.ToLower(m[1])
	}
	if in.Body == "" {
		in.Expression = expression(unq, env)
		if in.Expression != "" && !in.Has(Calculate) {
			// Arithmetic is its own action unless the request works on a file.
			in.Actions = append([]Action{Calculate}, in.Actions...)
		}
	}
	in.Recursive = reRecur.MatchString(unq)
	if m := reTypeW.FindStringSubmatch(unq); m != nil {
		in.FileType = normExt(m[1])
	}
	env.yield()
	in.readSpace(lower, env)
	env.yield()
	in.readObjects(unq, lower, env)
	env.yield()
	in.Every = in.Every || reEvery.MatchString(unq) && (in.Folder != nil || in.FileType != "" || in.Space != "") && !in.Has(List)
	if fs := in.Files(); len(fs) > 1 && !in.Has(Compare) && len(in.Parts) == 1 {
		// "summarize a.pdf and b.pdf": each file named gets the call.
		in.All = true
	}
	if in.Has(List) && in.Has(Summarize) && cachedPattern(`(?i)\b(?:them|each|those|all\s+of\s+them)\b`).MatchString(unq) {
		in.Every = true // "list the pdfs in papers, then summarize them"
		in.Actions = slicesDelete(in.Actions, List)
	}
	if in.Has(List) && in.Folder == nil && cachedPattern(`(?i)\b(?:find|search)\b`).MatchString(unq) {
		in.Recursive = true // find(1) looks everywhere
	}
	in.orderActions()
	return in
}

func normExt(e string) string {
	e = strings.ToLower(e)
	switch e {
	case "markdown":
		return "md"
	case "yml":
		return "yaml"
	case "htm":
		return "html"
	case "text":
		return "txt"
	case "jpeg":
		return "jpg"
	}
	return e
}

func slicesDelete(as []Action, a Action) []Action {
	var out []Action
	for _, x := range as {
		if x != a {
			out = append(out, x)
		}
	}
	return out
}

// readActions finds the action words, each kind once, in the order the
// request says them; a destructive word that is negated ("don't delete")
// or only describes ("the removed lines") is no ask.
func (in *Interpretation) readActions(s string, env Env) {
	type at struct {
		a   Action
		pos int
	}
	var found []at
	t := &haystack{s: s}
	for _, p := range actionPhrases {
		if !p.re.pre.may(t) {
			continue
		}
		env.yield()
		for m := range matches(p.re.Regexp, s) {
			if p.a.Destructive() && reNeg.MatchString(s[:m[0]]) {
				continue
			}
			if p.a == List && strings.EqualFold(s[m[0]:m[1]], "list") && reNounBefore.MatchString(s[:m[0]]) {
				continue // "the todo list" is a thing, not an ask to list
			}
			if p.a == Delete && strings.EqualFold(strings.TrimSpace(s[m[0]:m[1]]), "bin") && !strings.Contains(strings.ToLower(s), "bin the") {
				continue
			}
			found = append(found, at{p.a, m[0]})
			break
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].pos < found[j].pos })
	seen := map[Action]bool{}
	for _, f := range found {
		if !seen[f.a] {
			seen[f.a] = true
			in.Actions = append(in.Actions, f.a)
			if f.a.Destructive() {
				in.ExplicitDestructive = true
			}
		}
	}
	if in.Body != "" && !seen[Summarize] {
		in.Actions = append(in.Actions, Summarize)
	}
}

// orderActions puts the action the request is about first: a compare or
// summary over files it reads is about the compare or the summary; a
// listing that reads nothing is about the listing.
func (in *Interpretation) orderActions() {
	rank := map[Action]int{Delete: 0, Move: 0, Write: 0, Compare: 1, Summarize: 2, Calculate: 3, List: 4, Extract: 5, Read: 6}
	if in.Expression != "" && len(in.Files()) == 0 {
		rank[Calculate] = -1
	}
	if in.Has(Compare) && in.Expression != "" && len(in.Files()) == 0 {
		// "the difference between 10 and 4" is arithmetic.
		rank[Compare] = 9
	}
	if in.Has(List) && in.Has(Summarize) && !in.Every && in.Folder == nil && len(in.Files()) == 0 {
		rank[List] = 1
	}
	sort.SliceStable(in.Actions, func(i, j int) bool { return rank[in.Actions[i]] < rank[in.Actions[j]] })
}

// readSpace finds the space the request names, or the usual folder it
// names that is no space.
func (in *Interpretation) readSpace(lower string, env Env) {
	best := -1
	for _, sp := range env.Spaces {
		env.yield()
		l := strings.ToLower(sp)
		for _, form := range []string{l, strings.TrimSuffix(l, "s")} {
			if len(form) < 3 {
				continue
			}
			re := cachedPattern(`\b(?:in|from|under|inside|of|my|the|to)\s+(?:my\s+|the\s+)?` + regexp.QuoteMeta(form) + `s?\b|\b` + regexp.QuoteMeta(form) + `s?\s+(?:folder|space|directory|dir)\b|~/` + regexp.QuoteMeta(form))
			if loc := re.FindStringIndex(lower); loc != nil && (best < 0 || loc[0] < best) {
				best, in.Space = loc[0], sp
			}
		}
	}
	if in.Space == "" {
		for _, sp := range env.Spaces {
			if len(sp) >= 4 && cachedPattern(`\b`+regexp.QuoteMeta(strings.ToLower(sp))+`\b`).MatchString(lower) {
				in.Space = sp
				break
			}
		}
	}
	if in.Space != "" {
		return
	}
	folders := env.Folders
	if folders == nil {
		folders = DefaultFolders
	}
	names := make([]string, 0, len(folders))
	for n := range folders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		re := cachedPattern(`\b(?:in|from|under|inside|of|to)\s+(?:my\s+|the\s+)?` + n + `\b(?:\s+(?:folder|directory|dir))?|\bmy\s+` + n + `\b|\b` + n + `\s+(?:folder|directory|dir)\b|~/` + n + `\b`)
		if re.MatchString(lower) {
			in.MissingSpace, in.MissingHint = n, folders[n]
			return
		}
	}
}

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
