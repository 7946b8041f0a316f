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
	"regexp"
	"sort"
	"strings"
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
	// Chose says how an ordinal chose its one match among several ("the
	// second of the 3 that fit, by name"); "" when nothing was chosen.
	Chose string
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
	FileType string
	// NameHas is a word the names of the files it lists must contain
	// ("search my documents for attention": no tool reads inside every
	// file, so a search is by name).
	NameHas string
	// Destination are the files the request names as where something
	// goes ("save it as notes.md"): not objects to work on, and they need
	// not exist.
	Destination []string
	Recursive   bool
	// Ordinal is the ordinal that chose one file of several ("the second
	// paper", "the newest quote"), when it did: the file is the one
	// object, its Chose says how.
	Ordinal *Ordinal
	// Question: the request asks about a named document's content ("what
	// does the 2025 quote cost for the pro plan"): its reading is planned,
	// and the answer is in the text read.
	Question bool
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
	reTypeW      = MustPattern(`(?i)\b(pdf|txt|csv|md|markdown|json|ya?ml|html?|docx?|xlsx?|log|text|image|picture|photo|pic|spreadsheet|presentation|slide|png|jpe?g)(?:s|\s+files?|\s+documents?|\s+docs?)\b`)
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
	{List, MustPattern(`(?i)\b(?:list|listing|enumerate|ls|(?:what|which)\s+(?:(?:pdf|markdown|md|text|txt|csv|json|ya?ml|html?|image|log)\s+)?(?:files|documents|pdfs|papers|spreadsheets|images|pictures|photos|pics|presentations|slides)|show\s+(?:me\s+)?(?:all\s+)?(?:the\s+|my\s+)?(?:(?:pdf|markdown|md|text|txt|csv|json|ya?ml|html?|image|log)\s+)?(?:files|documents|pdfs|papers|spreadsheets|images|pictures|photos|pics|presentations|slides|contents\s+of\s+(?:the\s+|my\s+)?\w+\s+folder)|what'?s\s+in\s+(?:the\s+|my\s+)?\w+\s+(?:folder|directory|space)|find\s+(?:all\s+)?(?:the\s+|my\s+)?(?:files|pdfs|documents|papers)|how\s+many\s+(?:files|pdfs|documents|papers))\b`)},
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
	// An ordinal is no word of a file's name: "the second paper" names the
	// papers, and the ordinal picks one of them.
	ords, unq := readOrdinals(unq)
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
	question := in.Body == "" && in.Verb == "" && reQuestion.MatchString(unq)
	calcDropped := false
	if question && in.Expression == "" && len(in.Actions) == 1 && in.Actions[0] == Calculate {
		// "how much is the pro plan in the 2024 quote" states no
		// arithmetic: it may ask about a document.
		in.Actions, calcDropped = nil, true
	}
	env.yield()
	in.readSpace(lower, env)
	env.yield()
	in.readObjects(unq, lower, env)
	if w, search, needsPlace := nameSearch(unq); search && (w != "" || in.FileType != "") && (!needsPlace || in.Space != "" || in.Folder != nil) &&
		in.Body == "" && in.Expression == "" && !in.ExplicitDestructive {
		// A search of a space or folder ("search my documents for
		// attention") lists the files whose names say the word; the word
		// is not a file to open.
		in.NameHas, in.Recursive = w, true
		in.Actions, in.Objects = []Action{List}, nil
	}
	if in.takeDestinations() && len(in.Objects) == 0 {
		// The destination was the only file named, and a named file keeps
		// the request's descriptions from being looked up ("save the
		// summary of the 2025 quote to notes.md"): read them without it.
		rest := unq
		for _, d := range in.Destination {
			rest = strings.ReplaceAll(rest, d, " ")
		}
		in.readObjects(rest, strings.ToLower(rest), env)
	}
	env.yield()
	if question && len(in.Actions) == 0 && in.Expression == "" && len(in.Files()) > 0 && !in.All {
		// A question about what a document it names says: read it. Its
		// words are the question's; the file is named by a few of them
		// ("the quote"), which is what a choice among several replaces.
		in.Actions, in.Question = []Action{Read}, true
		for i, o := range in.Objects {
			if sp := namingSpan(o.Phrase, o.Matches); !o.Named && sp != "" {
				in.Objects[i].Phrase = sp
			}
		}
	} else if calcDropped {
		in.Actions = []Action{Calculate}
	}
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
	if in.Has(List) && in.FileType != "" && !in.Every {
		// A listing of a kind of file ("the pdfs in my documents") is
		// after those files wherever they are under the folder; a plain
		// listing ("list my documents") is the folder's own.
		in.Recursive = true
	}
	if len(ords) > 0 {
		in.applyOrdinals(ords, unq, env)
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
	case "picture", "photo", "pic":
		return "image"
	case "slide":
		return "presentation"
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
