package recommender

import (
	"encoding/json"
	"math"
	"slices"
	"sort"

	"github.com/airs-dev/airs/embeddings"
)

// ToolDoc is the text of one tool: its name, description and parameters
// (each parameter's name and description).
type ToolDoc struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Params      []string `json:"params,omitempty"`
}

// TextModel scores tools for a text (a task, a chat turn) with two parts:
//
//   - a lexical match: BM25 of the text's terms over the tools' documents
//     (name, description, parameters; the embeddings package's analyser and
//     BM25, postings built once in NewTextModel);
//   - learned word → tool associations from observed (text, tool) pairs:
//     for each term t the count of each tool seen with it, scored
//     as the idf-weighted mean over the text's terms of P(tool | t). This
//     is what learns that "juxtapose" means diff, or that a user's "tidy
//     up" means their archiving tool, which no description says.
//
// The two are blended by how much has been observed: with nothing learned
// the lexical match alone, moving to mostly the learned associations as
// observations accumulate (Prior observations give an even blend).
//
// Bounded (MaxTerms terms, MaxToolsPerTerm tools each), JSON round-trips,
// not safe for concurrent use: Scores reuses internal buffers.
type TextModel struct {
	// Prior is the number of observations at which the learned part weighs
	// as much as the lexical part (default 20).
	Prior float64
	// LexicalFloor is the smallest weight the lexical part keeps however
	// much has been learned (default 0.2).
	LexicalFloor float64
	// MaxTerms bounds the terms with learned associations (default 50,000).
	MaxTerms int
	// MaxToolsPerTerm bounds the tools kept per term (default 32).
	MaxToolsPerTerm int

	docs  []ToolDoc
	names []string         // tool number → name (docs first, then tools only observed)
	index map[string]int32 // name → tool number
	bm25  *embeddings.BM25
	assoc map[string]*termAssoc
	nObs  float64

	// scratch, reused by Scores
	lex, learned []float64
	touched      []int32
}

type termAssoc struct {
	n     float64 // observations containing the term
	tools []toolCount
}

type toolCount struct {
	tool int32
	n    float64
}

// Field weights of a tool's document: the name counts most, parameters least.
const (
	nameWeight  = 3
	descWeight  = 1
	paramWeight = 0.5
)

// NewTextModel indexes docs; a tool observed later without a doc gets only
// learned associations.
func NewTextModel(docs []ToolDoc) *TextModel {
	m := &TextModel{Prior: 20, LexicalFloor: 0.2, MaxTerms: 50000, MaxToolsPerTerm: 32,
		index: map[string]int32{}, assoc: map[string]*termAssoc{}}
	m.setDocs(docs)
	return m
}

func (m *TextModel) setDocs(docs []ToolDoc) {
	m.docs = slices.Clone(docs)
	wts := make([]embeddings.WeightedTerms, 0, len(docs))
	for _, d := range docs {
		var w embeddings.WeightedTerms
		add := func(text string, wt float32) {
			for _, t := range embeddings.Terms(text) {
				w.Terms = append(w.Terms, t)
				w.Weights = append(w.Weights, wt)
			}
		}
		add(d.Name, nameWeight)
		add(d.Description, descWeight)
		for _, p := range d.Params {
			add(p, paramWeight)
		}
		wts = append(wts, w)
		m.tool(d.Name)
	}
	m.bm25 = embeddings.NewBM25(wts, 1.2, 0.75)
}

// tool returns the number of name, adding it when new.
func (m *TextModel) tool(name string) int32 {
	if i, ok := m.index[name]; ok {
		return i
	}
	i := int32(len(m.names))
	m.names = append(m.names, name)
	m.index[name] = i
	return i
}

// Tools is the number of tools the model knows (documented or observed).
func (m *TextModel) Tools() int { return len(m.names) }

// queryTerms is the text's analysed terms, each once.
func queryTerms(text string) []string {
	ts := embeddings.Terms(text)
	sort.Strings(ts)
	return slices.Compact(ts)
}

// Observe learns that tool was called (or accepted) for text.
func (m *TextModel) Observe(text, tool string) {
	if tool == "" {
		return
	}
	if m.assoc == nil {
		m.assoc = map[string]*termAssoc{}
	}
	ti := m.tool(tool)
	terms := queryTerms(text)
	if len(terms) == 0 {
		return
	}
	m.nObs++
	for _, t := range terms {
		a := m.assoc[t]
		if a == nil {
			if m.MaxTerms > 0 && len(m.assoc) >= m.MaxTerms {
				m.evictTerm()
			}
			a = &termAssoc{}
			m.assoc[t] = a
		}
		a.n++
		found := false
		for k := range a.tools {
			if a.tools[k].tool == ti {
				a.tools[k].n++
				found = true
				break
			}
		}
		if !found {
			a.tools = append(a.tools, toolCount{ti, 1})
			if max := m.MaxToolsPerTerm; max > 0 && len(a.tools) > max {
				low := 0
				for k := range a.tools[:len(a.tools)-1] {
					if a.tools[k].n < a.tools[low].n {
						low = k
					}
				}
				a.tools = slices.Delete(a.tools, low, low+1)
			}
		}
	}
}

// evictTerm forgets the term seen least (ties: the greatest term).
func (m *TextModel) evictTerm() {
	var low string
	lv := math.Inf(1)
	for t, a := range m.assoc {
		if a.n < lv || a.n == lv && t > low {
			low, lv = t, a.n
		}
	}
	delete(m.assoc, low)
}

// Scores returns a score in [0,1] for each tool the text says something
// about; tools it says nothing about are absent.
func (m *TextModel) Scores(text string) map[string]float64 {
	out := map[string]float64{}
	m.AddScores(text, 1, out)
	return out
}

// AddScores adds weight × the text's score of each tool into out (which it
// does not clear): a caller can sum several texts, e.g. the turns of a
// conversation with older turns weighing less.
func (m *TextModel) AddScores(text string, weight float64, out map[string]float64) {
	terms := queryTerms(text)
	if len(terms) == 0 || len(m.names) == 0 {
		return
	}
	n := len(m.names)
	if cap(m.lex) < n {
		m.lex, m.learned = make([]float64, n), make([]float64, n)
	}
	lex, learned := m.lex[:n], m.learned[:n]
	clear(lex)
	clear(learned)
	m.touched = m.touched[:0]

	// Lexical part: BM25, relative to the best match.
	if m.bm25 != nil && m.bm25.Len() > 0 {
		m.bm25.Scores(terms, nil, lex[:m.bm25.Len()])
	}
	lexMax := 0.0
	for _, v := range lex {
		lexMax = math.Max(lexMax, v)
	}
	// Learned part: idf-weighted mean of P(tool | term) over the terms.
	var wsum float64
	for _, t := range terms {
		a := m.assoc[t]
		if a == nil || a.n == 0 {
			continue
		}
		idf := math.Log(1 + m.nObs/a.n)
		wsum += idf
		for _, tc := range a.tools {
			if learned[tc.tool] == 0 {
				m.touched = append(m.touched, tc.tool)
			}
			learned[tc.tool] += idf * tc.n / (a.n + 1)
		}
	}
	learnedMax := 0.0
	for _, i := range m.touched {
		learnedMax = math.Max(learnedMax, learned[i])
	}
	c := 0.0
	if learnedMax > 0 {
		c = m.nObs / (m.nObs + m.Prior)
		c = math.Min(c, 1-m.LexicalFloor)
	}
	if lexMax > 0 {
		a := (1 - c) / lexMax
		for i, v := range lex {
			if v > 0 {
				out[m.names[i]] += weight * a * v
			}
		}
	} else if learnedMax > 0 {
		c = 1
	}
	if learnedMax > 0 {
		b := c / learnedMax
		for _, i := range m.touched {
			out[m.names[i]] += weight * b * learned[i]
		}
	}
}

type textJSON struct {
	Prior           float64             `json:"prior"`
	LexicalFloor    float64             `json:"lexical_floor"`
	MaxTerms        int                 `json:"max_terms"`
	MaxToolsPerTerm int                 `json:"max_tools_per_term"`
	Docs            []ToolDoc           `json:"docs"`
	Observations    float64             `json:"observations"`
	Terms           map[string]termJSON `json:"terms,omitempty"`
}

type termJSON struct {
	N     float64            `json:"n"`
	Tools map[string]float64 `json:"tools"`
}

// MarshalJSON writes the docs (the index is rebuilt from them) and the
// learned associations.
func (m *TextModel) MarshalJSON() ([]byte, error) {
	j := textJSON{Prior: m.Prior, LexicalFloor: m.LexicalFloor, MaxTerms: m.MaxTerms, MaxToolsPerTerm: m.MaxToolsPerTerm,
		Docs: m.docs, Observations: m.nObs, Terms: map[string]termJSON{}}
	for t, a := range m.assoc {
		tj := termJSON{N: a.n, Tools: map[string]float64{}}
		for _, tc := range a.tools {
			tj.Tools[m.names[tc.tool]] = tc.n
		}
		j.Terms[t] = tj
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote and rebuilds the index.
func (m *TextModel) UnmarshalJSON(b []byte) error {
	var j textJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	g := NewTextModel(j.Docs)
	if j.Prior > 0 {
		g.Prior = j.Prior
	}
	g.LexicalFloor = j.LexicalFloor
	if j.MaxTerms > 0 {
		g.MaxTerms = j.MaxTerms
	}
	if j.MaxToolsPerTerm > 0 {
		g.MaxToolsPerTerm = j.MaxToolsPerTerm
	}
	g.nObs = j.Observations
	terms := make([]string, 0, len(j.Terms))
	for t := range j.Terms {
		terms = append(terms, t)
	}
	sort.Strings(terms) // deterministic tool numbers
	for _, t := range terms {
		tj := j.Terms[t]
		a := &termAssoc{n: tj.N}
		names := make([]string, 0, len(tj.Tools))
		for n := range tj.Tools {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			a.tools = append(a.tools, toolCount{g.tool(n), tj.Tools[n]})
		}
		g.assoc[t] = a
	}
	*m = *g
	return nil
}
