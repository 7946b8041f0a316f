package embeddings

import (
	"context"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A request an agent sends often states several needs in one paragraph
// ("find the conferences…, then check the weather there, and also book…").
// One query vector for the whole text averages the needs away, and one BM25
// score favours the tools that share the most words with the whole rather
// than one tool per need. So a long request is cut into its parts
// (sentences, list items, clauses joined by "then", "and also", …: cheap
// text rules, no model), each part is searched as a request of its own,
// and the parts' lists are fused with the whole request's list. A short
// request, or one that does not fall into parts, is searched whole exactly
// as before.

// PartsOptions configure how a request that states several needs is
// searched. The zero value means the defaults (DefaultParts, chosen on
// development splits: EVALS.md, "Requests that state several needs").
type PartsOptions struct {
	// Off searches every request whole.
	Off bool
	// MinWords: requests of fewer words are searched whole.
	MinWords int
	// MinParts: a request that falls into fewer parts is searched whole
	// (two sentences are often a context and one ask).
	MinParts int
	// MaxParts caps the searches one request costs besides the whole:
	// beyond it, the shortest neighbouring parts are joined.
	MaxParts int
	// MinTerms: a part with fewer analysed terms (stop words dropped) is
	// joined to the next ("Hey,", "Thanks!").
	MinTerms int
	// WholeWeight and PartWeight weigh the whole request's list and the
	// best of the parts' lists in the fusion (negative: leave it out).
	WholeWeight, PartWeight float64
	// Depth is how many candidates each list brings to the fusion.
	Depth int
	// GroupParts scales the group term (Options.GroupWeight) of the whole
	// request's search by min(1, GroupParts / number of parts). A group's
	// BM25 document is all its tools' text: the more needs a request
	// states, the more of its words a large server matches, and its tools
	// crowd out the one tool per need. Each part keeps the full weight.
	// Negative: not scaled.
	GroupParts float64
	// DenseParts scales the dense list's weight (Options.DenseWeight) of
	// the whole request's search by min(1, DenseParts / number of parts).
	// One vector for a text of several needs is their blur: it lies near
	// none of the tools that answer them, and near tools that answer no
	// need but share its general drift, so the more needs a request
	// states, the less its dense list says. The parts' lists, searched by
	// BM25F, place the tools of each need. 0 or negative: not scaled
	// (the default: its gain on the development sets was within their
	// noise, and it cost MCP-Bench's test half; EVALS.md).
	DenseParts float64
	// Contrast weighs each part's list by min(1, Contrast × (1 − its last
	// candidate's score / its best)): a part whose best tools hardly stand
	// out from the rest of its list ("Hey,", "please back it all up with
	// verifiable sources") states no need a tool answers, and its best
	// tool must not take a place from one that does. Negative: every part
	// weighs PartWeight.
	Contrast float64
}

// PartsAdvisor is an Embedder that carries the PartsOptions chosen for it:
// an Index opened with it and zero Options.Parts searches by them.
type PartsAdvisor interface {
	Parts() PartsOptions
}

// DefaultParts are the defaults of PartsOptions.
var DefaultParts = PartsOptions{MinWords: 30, MinParts: 3, MaxParts: 12, MinTerms: 3, WholeWeight: 1, PartWeight: 1, Depth: 30, GroupParts: 3, Contrast: 2}

func (p PartsOptions) resolved() PartsOptions {
	d := DefaultParts
	d.Off = p.Off
	if p.MinWords > 0 {
		d.MinWords = p.MinWords
	}
	if p.MaxParts > 0 {
		d.MaxParts = p.MaxParts
	}
	if p.MinTerms > 0 {
		d.MinTerms = p.MinTerms
	}
	if p.WholeWeight != 0 {
		d.WholeWeight = max(p.WholeWeight, 0)
	}
	if p.PartWeight != 0 {
		d.PartWeight = max(p.PartWeight, 0)
	}
	if p.Depth > 0 {
		d.Depth = p.Depth
	}
	if p.GroupParts != 0 {
		d.GroupParts = max(p.GroupParts, 0)
	}
	if p.DenseParts != 0 {
		d.DenseParts = max(p.DenseParts, 0)
	}
	if p.MinParts > 0 {
		d.MinParts = p.MinParts
	}
	if p.Contrast != 0 {
		d.Contrast = max(p.Contrast, 0)
	}
	return d
}

// RequestParts cuts a request into the parts it is searched by: nil when it
// is searched whole (shorter than MinWords words, or fewer than MinParts
// parts).
func RequestParts(query string, o PartsOptions) []string {
	return requestParts(query, o.resolved())
}

// requestParts is RequestParts under resolved options.
func requestParts(query string, o PartsOptions) []string {
	parts := requestPartTerms(query, o)
	if parts == nil {
		return nil
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	return texts
}

// part is one part of a request with its analysed terms, Terms(text).
// The terms of parts joined by a space are their terms one after the
// other (a space ends a token), so joining parts joins their terms and no
// part's text is analysed twice.
type part struct {
	text  string
	terms []string
}

// join is p and q joined by a space.
func (p part) join(q part) part {
	return part{p.text + " " + q.text, slices.Concat(p.terms, q.terms)}
}

// requestPartTerms is requestParts with each part's terms.
func requestPartTerms(query string, o PartsOptions) []part {
	if o.Off || countWords(query, o.MinWords) < o.MinWords {
		return nil
	}
	parts := joinShort(SplitRequest(query), o.MinTerms)
	if len(parts) < max(2, o.MinParts) {
		return nil
	}
	return capParts(parts, o.MaxParts)
}

// countWords counts the words of s up to limit (then stops).
func countWords(s string, limit int) int {
	n, in := 0, false
	for _, r := range s {
		sp := unicode.IsSpace(r)
		if !sp && !in {
			n++
			if n >= limit {
				return n
			}
		}
		in = !sp
	}
	return n
}

// SplitRequest cuts text into its sentences, list items and clauses (cut
// before "then", "and also", "as well as", "after that", …), trimmed; the
// connecting words stay with the clause they open. Every word of the text
// is in one part; what lies between parts (whitespace, list markers, the
// comma or semicolon before a clause) is dropped.
func SplitRequest(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(stripListMarker(strings.TrimSpace(line)))
		if line == "" {
			continue
		}
		for _, s := range sentences(line) {
			out = append(out, clauses(s)...)
		}
	}
	return out
}

// stripListMarker drops a leading "-", "*", "•", "1.", "2)", "a)" of a line.
func stripListMarker(line string) string {
	if line == "" {
		return line
	}
	switch line[0] {
	case '-', '*', '>':
		return line[1:]
	}
	if strings.HasPrefix(line, "•") {
		return line[len("•"):]
	}
	i := 0
	for i < len(line) && i < 3 && line[i] >= '0' && line[i] <= '9' {
		i++
	}
	if i == 0 && len(line) > 2 && line[0] >= 'a' && line[0] <= 'z' && line[1] == ')' {
		i = 1
	}
	if i > 0 && i+1 < len(line) && (line[i] == '.' || line[i] == ')') && line[i+1] == ' ' {
		return line[i+1:]
	}
	return line
}

// abbreviations end with a period that ends no sentence.
var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "mr": true, "mrs": true, "ms": true,
	"dr": true, "st": true, "approx": true, "inc": true, "ltd": true, "jr": true,
	"sr": true, "u.s": true, "fig": true, "cf": true, "al": true,
}

// sentences cuts a line after ".", "!", "?" (and the CJK stops) followed by
// a space, unless the period ends an abbreviation or an initial.
func sentences(line string) []string {
	var out []string
	start := 0
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		end := i + size
		switch r {
		case '。', '！', '？':
			out = append(out, line[start:end])
			start = end
		case '.', '!', '?':
			// Closing quotes and brackets stay with their sentence.
			j := end
			for j < len(line) && strings.ContainsRune(`"')]”’`, rune(line[j])) {
				j++
			}
			if j < len(line) && line[j] == ' ' && (r != '.' || !abbreviationBefore(line[start:i])) {
				out = append(out, line[start:j])
				start = j
			}
		}
		i = end
	}
	out = append(out, line[start:])
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// abbreviationBefore tells whether the text before a period ends in an
// abbreviation or a single letter (an initial, "U.S").
func abbreviationBefore(s string) bool {
	i := strings.LastIndexAny(s, " (\"'")
	w := strings.ToLower(s[i+1:])
	return utf8.RuneCountInString(w) <= 1 || abbreviations[w]
}

// clauseCuts open a new clause: a part is cut before them.
var clauseCuts = []string{
	", then ", "; then ", " and then ", " then ",
	", and also ", " and also ", ", also ", ", as well as ",
	", after that", " after that,", " afterwards ", ", and finally ", ", finally ",
	", plus ", "; ",
}

// clauses cuts a sentence before its clause connectives.
func clauses(s string) []string {
	lower := strings.ToLower(s) // same byte length for the ASCII cuts
	if len(lower) != len(s) {
		return []string{s}
	}
	var cuts []int
	for _, c := range clauseCuts {
		for off := 0; ; {
			j := strings.Index(lower[off:], c)
			if j < 0 {
				break
			}
			at := off + j
			cuts = append(cuts, at)
			off = at + len(c)
		}
	}
	if len(cuts) == 0 {
		return []string{s}
	}
	slices.Sort(cuts)
	var out []string
	prev := 0
	for _, c := range cuts {
		if c <= prev {
			continue
		}
		out = append(out, strings.Trim(s[prev:c], " ,;"))
		prev = c
	}
	out = append(out, strings.Trim(s[prev:], " ,;"))
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}

// joinShort joins each part with fewer than minTerms analysed terms to the
// following part (the last one to the one before it).
func joinShort(texts []string, minTerms int) []part {
	var out []part
	var carry part
	for _, t := range texts {
		p := part{t, Terms(t)}
		if carry.text != "" {
			p = carry.join(p)
			carry = part{}
		}
		if len(p.terms) < minTerms {
			carry = p
			continue
		}
		out = append(out, p)
	}
	if carry.text != "" {
		if len(out) == 0 {
			return []part{carry}
		}
		out[len(out)-1] = out[len(out)-1].join(carry)
	}
	return out
}

// capParts joins neighbouring parts, the shortest pair first, until at
// most n remain. A text of many more parts (a pasted document) is first cut
// into runs of equally many parts, so that the pairwise joining stays cheap.
func capParts(parts []part, n int) []part {
	if run := len(parts) / (4 * n); run > 1 {
		var runs []part
		for i := 0; i < len(parts); i += run {
			r := parts[i]
			for _, p := range parts[i+1 : min(i+run, len(parts))] {
				r = r.join(p)
			}
			runs = append(runs, r)
		}
		parts = runs
	}
	for len(parts) > n {
		best, bestLen := 0, -1
		for i := 0; i+1 < len(parts); i++ {
			l := len(parts[i].text) + len(parts[i+1].text)
			if bestLen < 0 || l < bestLen {
				best, bestLen = i, l
			}
		}
		parts[best] = parts[best].join(parts[best+1])
		parts = slices.Delete(parts, best+1, best+2)
	}
	return parts
}

// searchParts searches the whole request as Search does and each of its
// parts by BM25F alone (with the group term), and fuses the lists: a
// tool's score is WholeWeight × its score in the whole request's list +
// PartWeight × its best score among the parts' lists, each list's scores
// divided by that list's best and a part's list weighed by its contrast
// (PartsOptions.Contrast). The best of the parts, not their sum: a tool
// that answers one need fully must not lose to one that shares a few words
// with every part. A part is a few words naming one need, which BM25F
// matches precisely; the model's vector of the whole request carries the
// request's meaning, and a part then costs no encoding and no dense scan.
//
// Dense, BM25 and the ranks of a hit are those of the whole request's
// lists; a tool only a part found gets the cosine of its vector with the
// whole request's and its best part's BM25 score.
func (ix *Index) searchParts(ctx context.Context, query string, parts []part, k int, f Filter, o PartsOptions) ([]Hit, error) {
	depth := max(k, o.Depth)
	wo := ix.opts.forParts(o, len(parts))
	ix.mu.RLock()
	st := ix.st
	ix.mu.RUnlock()
	// The whole request and its parts are filtered by one mask (the whole
	// search computes its own if the index changed meanwhile).
	mask := st.allowed(&f)
	f.mask, f.maskOf = mask, st
	// The whole request's vector serves again for the tools only a part
	// found (partDense).
	ctx = context.WithValue(ctx, queryMemoKey{}, &queryMemo{query: query})
	whole, err := ix.searchWholeWith(ctx, query, depth, f, wo)
	if err != nil {
		return nil, err
	}

	type acc struct {
		hit         Hit
		doc         int // position in st; -1 when the hit came from the whole list
		whole, part float64
	}
	at := map[string]int{}
	accs := make([]acc, 0, depth*(len(parts)+1))
	if len(whole) > 0 && whole[0].Fused > 0 {
		for _, h := range whole {
			at[h.ID] = len(accs)
			accs = append(accs, acc{hit: h, doc: -1, whole: h.Fused / whole[0].Fused})
		}
	}
	if len(st.docs) > 0 {
		sp := scratchFloats(len(st.docs))
		defer floatPool.Put(sp)
		for _, p := range parts {
			// A part's list is its first depth documents: ranked by one
			// total order, they are the first depth of any longer list.
			_, l := st.sparseList(p.terms, depth, mask, &ix.opts, *sp)
			if len(l) == 0 || l[0].Score <= 0 {
				continue
			}
			top := l[0].Score
			w := 1.0
			if o.Contrast > 0 {
				w = min(1, o.Contrast*(1-l[len(l)-1].Score/top))
			}
			for _, c := range l {
				id := st.docs[c.Doc].ID
				i, ok := at[id]
				if !ok {
					i = len(accs)
					at[id] = i
					accs = append(accs, acc{hit: Hit{ID: id}, doc: c.Doc})
				}
				a := &accs[i]
				a.part = max(a.part, w*c.Score/top)
				if a.doc >= 0 {
					a.hit.BM25 = max(a.hit.BM25, c.Score)
				}
			}
		}
	}
	hits := make([]Hit, len(accs))
	for i := range accs {
		a := &accs[i]
		a.hit.Fused = o.WholeWeight*a.whole + o.PartWeight*a.part
		hits[i] = a.hit
	}
	slices.SortFunc(hits, byFused)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, ix.partDense(ctx, st, query, hits, func(id string) int { return accs[at[id]].doc })
}

// forParts are the options of the whole request's search when it states n
// needs: the group term and the dense list scaled down (GroupParts,
// DenseParts). o itself when neither applies.
func (o *Options) forParts(p PartsOptions, n int) *Options {
	nf := float64(n)
	group := p.GroupParts > 0 && p.GroupParts < nf
	dense := p.DenseParts > 0 && p.DenseParts < nf
	if !group && !dense {
		return o
	}
	scaled := *o
	if group {
		scaled.GroupWeight *= p.GroupParts / nf
	}
	if dense {
		scaled.DenseWeight *= p.DenseParts / nf
	}
	return &scaled
}

// partDense sets the dense similarity of the hits only a part found: the
// cosine of their vector with the whole request's (no group term).
func (ix *Index) partDense(ctx context.Context, st *state, query string, hits []Hit, doc func(string) int) error {
	var qv []float32
	for i := range hits {
		d := doc(hits[i].ID)
		if d < 0 {
			continue
		}
		if qv == nil {
			v, err := ix.embedQuery(ctx, query)
			if err != nil {
				return err
			}
			if len(v) != 1 || len(v[0]) != st.dim {
				return nil // the whole search would have said so
			}
			qv = normalize32(v[0])
		}
		hits[i].Dense = max(float64(dot(qv, st.vector(d))), 0)
	}
	return nil
}
