package understand

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/airs-dev/airs/embeddings"
)

// FileIndex is the names of the files and folders in the spaces, kept for
// resolving what a request names ("the 2025 acme quote" →
// quotes/acme-2025.pdf) without walking a space per request. It is built
// once per space (Build) and then kept current entry by entry (Add,
// Remove) from the file watcher's events. Lookups take a read lock; every
// index is per space, so a caller's lookup only touches the spaces it may
// read.
type FileIndex struct {
	mu     sync.RWMutex
	spaces map[string]*spaceIndex
	// roots are the spaces' folders (absolute) as Build was given them:
	// two spaces may hold the same file (the working folder is the home,
	// whose Documents is a space too), and a file is one file.
	roots map[string]string
}

// spaceIndex holds a space's entries by number; the maps from words to
// entries hold numbers, not pointers, so that the garbage collector has
// nothing to trace in them (with a hundred thousand files, tracing the
// index dominated the CPU a running process spends on it).
type spaceIndex struct {
	list    []*Entry           // by number; nil once removed
	free    []int32            // numbers of removed entries, for reuse
	entries map[string]int32   // path → number
	byToken map[string][]int32 // analysed name token → numbers
	byBase  map[string][]int32 // lower-case base name → numbers
	// words and dirs intern the tokens and the folder tokens entries
	// share: a folder's thousand files hold one copy of its words.
	words map[string]string
	dirs  map[string][]string
	// exts counts the files directly in each folder ("." the top) by
	// type, kept with every add and remove: "every file of a folder" and
	// "the files that fill a folder" are answered without a walk.
	exts map[string]map[string]int
}

func newSpaceIndex() *spaceIndex {
	return &spaceIndex{entries: map[string]int32{}, byToken: map[string][]int32{}, byBase: map[string][]int32{},
		words: map[string]string{}, dirs: map[string][]string{}, exts: map[string]map[string]int{}}
}

// get is entry n.
func (si *spaceIndex) get(n int32) *Entry { return si.list[n] }

// Entry is one file or folder of a space.
type Entry struct {
	Space string
	Path  string // relative, with /
	Dir   bool
	base  string // lower-case base name
	ext   string // lower-case extension without the dot
	stem  []string
	dirs  []string // tokens of the folders above it
}

// NewFileIndex is an empty index.
func NewFileIndex() *FileIndex {
	return &FileIndex{spaces: map[string]*spaceIndex{}, roots: map[string]string{}}
}

// maxScan bounds the entries one search scores in a space.
const maxScan = 4096

// MaxIndexed bounds the entries Build takes from one space.
const MaxIndexed = 500_000

// Build indexes the files under root as space (replacing what the index
// held for it). Hidden files and folders (a leading dot) are left out.
func (x *FileIndex) Build(space, root string) error {
	si := newSpaceIndex()
	rt, err := os.OpenRoot(root)
	if err != nil {
		x.mu.Lock()
		x.spaces[space] = si
		x.mu.Unlock()
		return err
	}
	defer rt.Close()
	n := 0
	err = fs.WalkDir(rt.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if n++; n > MaxIndexed {
			return fs.SkipAll
		}
		si.add(si.newEntry(space, p, d.IsDir()))
		return nil
	})
	x.mu.Lock()
	x.spaces[space] = si
	if abs, aerr := filepath.Abs(root); aerr == nil {
		x.roots[space] = abs
	}
	x.mu.Unlock()
	return err
}

// Distinct drops from es the entries that are the same file as another
// one of es seen through another space, keeping the one of the space
// whose folder is deepest (the most specific name for it: "documents",
// not the working folder above it). Order is kept.
func (x *FileIndex) Distinct(es []*Entry) []*Entry {
	if len(es) < 2 {
		return es
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.distinct(es)
}

func (x *FileIndex) distinct(es []*Entry) []*Entry {
	if len(es) < 2 || len(x.roots) < 2 {
		return es
	}
	best := map[string]*Entry{}
	for _, e := range es {
		root, ok := x.roots[e.Space]
		if !ok {
			continue
		}
		abs := filepath.Join(root, filepath.FromSlash(e.Path))
		if b, ok := best[abs]; !ok || len(root) > len(x.roots[b.Space]) {
			best[abs] = e
		}
	}
	out := es[:0:0]
	for _, e := range es {
		root, ok := x.roots[e.Space]
		if !ok || best[filepath.Join(root, filepath.FromSlash(e.Path))] == e {
			out = append(out, e)
		}
	}
	return out
}

// Add records (or refreshes) one file or folder.
func (x *FileIndex) Add(space, rel string, dir bool) {
	rel = cleanRel(rel)
	if rel == "" {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	si := x.spaces[space]
	if si == nil {
		si = newSpaceIndex()
		x.spaces[space] = si
	}
	if _, ok := si.entries[rel]; ok {
		return
	}
	si.add(si.newEntry(space, rel, dir))
}

// Remove forgets a file or folder (and, for a folder, what was under it).
func (x *FileIndex) Remove(space, rel string) {
	rel = cleanRel(rel)
	x.mu.Lock()
	defer x.mu.Unlock()
	si := x.spaces[space]
	if si == nil {
		return
	}
	for p, n := range si.entries {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			si.remove(n)
		}
	}
}

// Len is the number of entries indexed in space.
func (x *FileIndex) Len(space string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if si := x.spaces[space]; si != nil {
		return len(si.entries)
	}
	return 0
}

// Has reports whether space holds rel (a path, or a bare name found in
// some folder).
func (x *FileIndex) Has(space, rel string) bool {
	return len(x.Named(space, rel)) > 0
}

// Named finds a file by the name a request wrote: its path in space, or
// its base name anywhere in it (a user names a file, not its folder).
func (x *FileIndex) Named(space, name string) []*Entry {
	name = cleanRel(name)
	x.mu.RLock()
	defer x.mu.RUnlock()
	si := x.spaces[space]
	if si == nil || name == "" {
		return nil
	}
	if n, ok := si.entries[name]; ok {
		return []*Entry{si.get(n)}
	}
	lower := strings.ToLower(name)
	if n, ok := si.entries[lower]; ok {
		return []*Entry{si.get(n)}
	}
	var out []*Entry
	if !strings.Contains(name, "/") {
		for _, n := range si.byBase[lower] {
			out = append(out, si.get(n))
		}
	} else {
		for p, n := range si.entries {
			if strings.EqualFold(p, name) || strings.HasSuffix(strings.ToLower(p), "/"+lower) {
				out = append(out, si.get(n))
			}
		}
	}
	sortEntries(out)
	return out
}

// Spaces lists the spaces indexed.
func (x *FileIndex) Spaces() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]string, 0, len(x.spaces))
	for s := range x.spaces {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// DirExts counts the extensions of the files directly in folder dir of
// space ("" or "." is the top).
func (x *FileIndex) DirExts(space, dir string) map[string]int {
	dir = cleanRel(dir)
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := map[string]int{}
	si := x.spaces[space]
	if si == nil {
		return out
	}
	if dir == "" {
		dir = "."
	}
	for ext, n := range si.exts[dir] {
		out[ext] = n
	}
	return out
}

func cleanRel(rel string) string {
	rel = strings.ReplaceAll(rel, "\\", "/")
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	if rel == "." || rel == "/" || strings.HasPrefix(rel, "../") || rel == ".." {
		return ""
	}
	return strings.TrimPrefix(rel, "/")
}

// NewEntry is the entry rel would be in space (for a file not indexed).
func NewEntry(space, rel string, dir bool) *Entry { return newEntry(space, rel, dir) }

func newEntry(space, rel string, dir bool) *Entry {
	return newSpaceIndex().newEntry(space, rel, dir)
}

// newEntry is the entry rel would be, its words interned in si.
func (si *spaceIndex) newEntry(space, rel string, dir bool) *Entry {
	rel = cleanRel(rel)
	base := path.Base(rel)
	e := &Entry{Space: space, Path: rel, Dir: dir, base: strings.ToLower(base)}
	stem := base
	if !dir {
		if i := strings.LastIndexByte(base, '.'); i > 0 {
			e.ext = strings.ToLower(base[i+1:])
			stem = base[:i]
		}
	}
	e.stem = nameTokens(stem)
	for i, t := range e.stem {
		e.stem[i] = si.word(t)
	}
	if d := path.Dir(rel); d != "." {
		ds, ok := si.dirs[d]
		if !ok {
			ds = nameTokens(d)
			for i, t := range ds {
				ds[i] = si.word(t)
			}
			si.dirs[d] = ds
		}
		e.dirs = ds
	}
	return e
}

// word is t, interned.
func (si *spaceIndex) word(t string) string {
	if w, ok := si.words[t]; ok {
		return w
	}
	si.words[t] = t
	return t
}

func (si *spaceIndex) add(e *Entry) {
	var n int32
	if k := len(si.free); k > 0 {
		n, si.free = si.free[k-1], si.free[:k-1]
		si.list[n] = e
	} else {
		n = int32(len(si.list))
		si.list = append(si.list, e)
	}
	si.entries[e.Path] = n
	if !e.Dir {
		d := path.Dir(e.Path)
		if si.exts[d] == nil {
			si.exts[d] = map[string]int{}
		}
		si.exts[d][e.ext]++
	}
	si.byBase[e.base] = append(si.byBase[e.base], n)
	for _, t := range e.tokens() {
		si.byToken[t] = append(si.byToken[t], n)
	}
}

// tokens are the words of its name and its folders', once each.
func (e *Entry) tokens() []string {
	var out []string
	for _, t := range append(append([]string(nil), e.stem...), e.dirs...) {
		if !slicesContains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func (si *spaceIndex) remove(n int32) {
	e := si.get(n)
	delete(si.entries, e.Path)
	if !e.Dir {
		d := path.Dir(e.Path)
		if m := si.exts[d]; m != nil {
			if m[e.ext]--; m[e.ext] <= 0 {
				delete(m, e.ext)
			}
			if len(m) == 0 {
				delete(si.exts, d)
			}
		}
	}
	drop(si.byBase, e.base, n)
	for _, t := range e.tokens() {
		drop(si.byToken, t, n)
	}
	si.list[n] = nil
	si.free = append(si.free, n)
}

// drop takes n out of m[k] (and k out of m once empty).
func drop(m map[string][]int32, k string, n int32) {
	ns := m[k]
	for i, x := range ns {
		if x == n {
			ns = append(ns[:i:i], ns[i+1:]...)
			break
		}
	}
	if len(ns) == 0 {
		delete(m, k)
		return
	}
	m[k] = ns
}

// nameTokens splits a file or folder name into analysed words:
// "Meeting-Notes_2025" → meet, note, 2025; "acmeQuote" → acme, quote.
func nameTokens(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, normToken(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			if len(cur) > 0 && (unicode.IsDigit(prev) || unicode.IsUpper(r) && unicode.IsLower(prev)) {
				flush()
			}
			cur = append(cur, unicode.ToLower(r))
		case unicode.IsDigit(r):
			if len(cur) > 0 && unicode.IsLetter(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

// normToken is a word as names and requests are compared: lower case,
// stemmed ("quotes" and "quote", "notes" and "note" meet).
func normToken(w string) string { return embeddings.Stem(strings.ToLower(w)) }

// scored is an entry with how well a reference's words name it.
type scored struct {
	e        *Entry
	stemHits int
	dirHits  int
	extHit   bool
	cover    float64 // share of the entry's own name words the reference says
}

// Search finds the entries of the given spaces whose names the words
// name best: each entry is scored by the words of its own name the words
// say (then those of its folders, then the file type), and every entry
// with the best score is returned, files or folders as asked. An entry
// must share at least one word of its own name with the words.
func (x *FileIndex) Search(spaces []string, words []string, ext string, wantDir bool) []*Entry {
	return x.SearchWith(spaces, words, ext, wantDir, nil)
}

// SearchWith is Search keeping only the entries accept takes (the words of
// the entry's own name and of its folders that matched, and the share of
// its own name's words matched).
func (x *FileIndex) SearchWith(spaces []string, words []string, ext string, wantDir bool, accept func(e *Entry, stemHits, dirHits int, cover float64) bool) []*Entry {
	if len(words) == 0 {
		return nil
	}
	set := map[string]bool{}
	for _, w := range words {
		set[w] = true
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	seen := map[*Entry]*scored{}
	for _, sp := range spaces {
		si := x.spaces[sp]
		if si == nil {
			continue
		}
		// Candidates come from the request's rarer words: a word most
		// names share ("note" in a hundred thousand notes) scores the
		// candidates but does not enumerate them, unless it is all there is.
		gen := make([]string, 0, len(set))
		for w := range set {
			if len(si.byToken[w]) > 0 {
				gen = append(gen, w)
			}
		}
		sort.Slice(gen, func(i, j int) bool { return len(si.byToken[gen[i]]) < len(si.byToken[gen[j]]) })
		if len(gen) > 1 {
			cut := len(gen)
			for cut > 1 && len(si.byToken[gen[cut-1]]) > maxScan {
				cut--
			}
			gen = gen[:cut]
		}
		scanned := 0
		for _, w := range gen {
			for _, n := range si.byToken[w] {
				if scanned++; scanned > maxScan {
					break
				}
				e := si.get(n)
				if e.Dir != wantDir || seen[e] != nil {
					continue
				}
				s := &scored{e: e}
				seenTok := map[string]bool{}
				for _, t := range e.stem {
					if set[t] && !seenTok[t] {
						seenTok[t] = true
						s.stemHits++
					}
				}
				for _, t := range e.dirs {
					if set[t] && !seenTok[t] {
						seenTok[t] = true
						s.dirHits++
					}
				}
				s.extHit = ext != "" && e.ext == ext
				if len(e.stem) > 0 {
					s.cover = float64(s.stemHits) / float64(len(e.stem))
				}
				seen[e] = s
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	better := func(a, b *scored) int { // >0: a better
		if d := (a.stemHits + a.dirHits) - (b.stemHits + b.dirHits); d != 0 {
			return d
		}
		if d := a.stemHits - b.stemHits; d != 0 {
			return d
		}
		if a.extHit != b.extHit {
			if a.extHit {
				return 1
			}
			return -1
		}
		switch {
		case a.cover > b.cover:
			return 1
		case a.cover < b.cover:
			return -1
		}
		return 0
	}
	var best []*scored
	for _, s := range seen {
		if ext != "" && !wantDir && s.e.ext != ext && !sameKind(ext, s.e.ext) {
			continue // "the acme pdf" is not acme.txt
		}
		if accept != nil && !accept(s.e, s.stemHits, s.dirHits, s.cover) {
			continue
		}
		switch {
		case len(best) == 0 || better(s, best[0]) > 0:
			best = []*scored{s}
		case better(s, best[0]) == 0:
			best = append(best, s)
		}
	}
	out := make([]*Entry, len(best))
	for i, s := range best {
		out[i] = s.e
	}
	sortEntries(out)
	return x.distinct(out)
}

// sameKind: text types a request calls by one word ("the notes file"),
// and a kind of file and the types it takes in ("the spreadsheet" and
// budget.xlsx).
func sameKind(a, b string) bool {
	text := map[string]bool{"txt": true, "md": true, "markdown": true, "text": true}
	if text[a] && text[b] {
		return true
	}
	for _, k := range [2][2]string{{a, b}, {b, a}} {
		if ts, ok := fileKinds[k[0]]; ok && slices.Contains(ts, k[1]) {
			return true
		}
	}
	return false
}

func sortEntries(es []*Entry) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].Space != es[j].Space {
			return es[i].Space < es[j].Space
		}
		return es[i].Path < es[j].Path
	})
}

// Ext is the entry's lower-case file type ("pdf"), "" for a folder.
func (e *Entry) Ext() string { return e.ext }
