package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/airs-dev/airs/pipeline"
)

// Summarizer writes a summary with a model. Register takes one optionally;
// when it is set, summarize uses it and says "method":"model", falling back
// to the extractive summary (and saying why) if the model fails.
type Summarizer interface {
	Summarize(ctx context.Context, text string, maxWords int) (string, error)
}

const (
	summarizeMaxChars        = 2_000_000
	summarizeDefaultMaxWords = 120
	summarizeMaxSentences    = 2000 // TextRank compares every pair of sentences
)

// SummarizeTool describes summarize.
func SummarizeTool() pipeline.Tool {
	return pipeline.Tool{
		Name:    "summarize",
		Version: "1.0.0",
		Description: "Summarize a text (an article, a paper, a report, the text of a PDF) in at most max_words words. " +
			"Uses the configured language model when there is one; otherwise picks the most central sentences " +
			"(extractive TextRank summary). The result says which method was used.",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"text": {"type": "string", "minLength": 1, "maxLength": 2000000, "description": "The text to summarize."},
				"max_words": {"type": "integer", "minimum": 5, "maximum": 2000, "default": 120,
					"description": "Upper bound on the summary's length in words."}
			},
			"required": ["text"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"summary": {"type": "string"},
				"method": {"enum": ["extractive", "model"]},
				"words": {"type": "integer", "minimum": 0},
				"sentences": {"type": "integer", "minimum": 0},
				"source_sentences": {"type": "integer", "minimum": 0},
				"note": {"type": "string"}
			},
			"required": ["summary", "method", "words"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Slow, // a model may write it
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type summarizeParams struct {
	Text     string `json:"text"`
	MaxWords int    `json:"max_words"`
}

// Summary is summarize's result.
type Summary struct {
	Summary         string `json:"summary"`
	Method          string `json:"method"` // extractive or model
	Words           int    `json:"words"`
	Sentences       int    `json:"sentences,omitempty"`        // extractive: sentences kept
	SourceSentences int    `json:"source_sentences,omitempty"` // extractive: sentences in the text
	Note            string `json:"note,omitempty"`             // why the model was not used, if it failed
}

// Summarize is summarize's handler; m may be nil.
func Summarize(m Summarizer) pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		p := summarizeParams{MaxWords: summarizeDefaultMaxWords}
		if err := decodeParams(ctx, params, &p); err != nil {
			return nil, err
		}
		if p.MaxWords < 5 || p.MaxWords > 2000 {
			return nil, reject(CodeBadParams, "max_words must be between 5 and 2000")
		}
		if len(p.Text) > summarizeMaxChars {
			return nil, reject(CodeTooLarge, "text has %d bytes; summarize takes at most %d", len(p.Text), summarizeMaxChars)
		}
		if !utf8.ValidString(p.Text) {
			return nil, reject(CodeNotText, "text is not valid UTF-8")
		}
		note := ""
		if m != nil {
			s, err := m.Summarize(ctx, p.Text, p.MaxWords)
			if err == nil {
				s = limitWords(strings.TrimSpace(s), p.MaxWords)
				return result(Summary{Summary: s, Method: "model", Words: len(strings.Fields(s))})
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			note = "model failed (" + err.Error() + "); extractive summary instead"
		}
		s, err := extractive(ctx, p.Text, p.MaxWords)
		if err != nil {
			return nil, err
		}
		if note != "" && s.Note != "" {
			note += "; "
		}
		s.Note = note + s.Note
		return result(s)
	})
}

// Extractive summarizes text by TextRank (Mihalcea & Tarau, "TextRank:
// Bringing Order into Texts", EMNLP 2004): sentences are the nodes of a
// graph whose edge weights are their content-word overlap normalised by
// length, overlap / (log|Si| + log|Sj|); PageRank with damping 0.85 over
// that graph ranks them. The best-ranked sentences that fit in maxWords are
// returned in their original order; a sentence that shares no content word
// with any other is left out (it is off topic) unless no sentence shares
// any. If even the best sentence is longer
// than maxWords, it is cut at maxWords with an ellipsis.
func Extractive(text string, maxWords int) Summary {
	s, _ := extractive(context.Background(), text, maxWords)
	return s
}

// extractive is Extractive that stops with ctx.Err() when ctx ends: the
// sentence split checks it every few paragraphs, TextRank on every row of
// its pairwise comparison and every PageRank iteration.
func extractive(ctx context.Context, text string, maxWords int) (Summary, error) {
	sents, err := splitSentences(ctx, text)
	if err != nil {
		return Summary{}, err
	}
	out := Summary{Method: "extractive", SourceSentences: len(sents)}
	if len(sents) > summarizeMaxSentences {
		sents = sents[:summarizeMaxSentences]
		out.Note = fmt.Sprintf("only the first %d of %d sentences were ranked", summarizeMaxSentences, out.SourceSentences)
	}
	if len(sents) == 0 {
		return out, nil
	}
	scores, linked, err := textRank(ctx, sents)
	if err != nil {
		return Summary{}, err
	}
	order := make([]int, len(sents))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return scores[order[x]] > scores[order[y]] })

	keep := make([]bool, len(sents))
	words := 0
	anyLinked := slices.Contains(linked, true)
	for _, i := range order {
		if anyLinked && !linked[i] {
			continue // shares no content word with any other sentence: off topic
		}
		n := len(strings.Fields(sents[i]))
		if words+n <= maxWords {
			keep[i] = true
			words += n
			out.Sentences++
		}
	}
	if out.Sentences == 0 {
		s := limitWords(sents[order[0]], maxWords)
		out.Summary, out.Words, out.Sentences = s, len(strings.Fields(s)), 1
		return out, nil
	}
	var parts []string
	for i, k := range keep {
		if k {
			parts = append(parts, sents[i])
		}
	}
	out.Summary = strings.Join(parts, " ")
	out.Words = words
	return out, nil
}

// limitWords keeps the first n words of s, marking a cut with "…".
func limitWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) <= n {
		return s
	}
	return strings.Join(f[:n], " ") + "…"
}

// SplitSentences splits text into sentences: at . ! ? (and their
// full-width forms) followed by white space and not part of a common
// abbreviation or an initial, and at blank lines and line breaks after a
// line that looks like a heading. White space inside a sentence is
// collapsed.
func SplitSentences(text string) []string {
	out, _ := splitSentences(context.Background(), text)
	return out
}

func splitSentences(ctx context.Context, text string) ([]string, error) {
	paras, err := splitParagraphs(ctx, text)
	if err != nil {
		return nil, err
	}
	var out []string
	for n, para := range paras {
		if n%checkLines == 0 && stopped(ctx) != nil {
			return nil, ctx.Err()
		}
		words, err := fieldsCtx(ctx, para)
		if err != nil {
			return nil, err
		}
		start := 0
		for i, w := range words {
			if i%checkLines == 0 && stopped(ctx) != nil {
				return nil, ctx.Err() // one paragraph may be the whole text
			}
			if i == len(words)-1 || endsSentence(w, words[i+1]) {
				s := strings.Join(words[start:i+1], " ")
				if hasLetter(s) {
					out = append(out, s)
				}
				start = i + 1
			}
		}
	}
	return out, nil
}

func splitParagraphs(ctx context.Context, text string) ([]string, error) {
	lines, err := splitLinesCtx(ctx, text)
	if err != nil {
		return nil, err
	}
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for n, line := range lines {
		if n%checkLines == 0 && stopped(ctx) != nil {
			return nil, ctx.Err()
		}
		t := strings.TrimSpace(line)
		if t == "" {
			flush()
			continue
		}
		cur = append(cur, t)
		// A short line without final punctuation followed by a line break
		// is a heading or a list item: its own sentence.
		if fewWords(t, 8) && !strings.ContainsAny(t[len(t)-1:], ".!?,;:") {
			flush()
		}
	}
	flush()
	return paras, nil
}

// fewWords reports whether s has at most n words, looking no further than
// the (n+1)th: a line may be a whole 2 MB text.
func fewWords(s string, n int) bool {
	words, in := 0, false
	for _, r := range s {
		if unicode.IsSpace(r) {
			in = false
		} else if !in {
			in = true
			if words++; words > n {
				return false
			}
		}
	}
	return true
}

// fieldsCtx is strings.Fields in 64 KiB pieces cut at ASCII white space,
// with a context check between them: one paragraph may be the whole text.
func fieldsCtx(ctx context.Context, s string) ([]string, error) {
	const piece = 64 << 10
	var out []string
	for s != "" {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cut := len(s)
		if cut > piece {
			if i := strings.IndexAny(s[piece:], " \t\n\r\v\f"); i >= 0 {
				cut = piece + i
			}
		}
		out = append(out, strings.Fields(s[:cut])...)
		s = s[cut:]
	}
	return out, nil
}

var abbreviations = map[string]bool{
	"e.g.": true, "i.e.": true, "etc.": true, "vs.": true, "mr.": true, "mrs.": true, "ms.": true,
	"dr.": true, "prof.": true, "fig.": true, "al.": true, "no.": true, "approx.": true, "cf.": true,
	"st.": true, "jr.": true, "sr.": true, "inc.": true, "ltd.": true, "co.": true, "eq.": true,
}

func endsSentence(w, next string) bool {
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(w, `"'”’)]`))
	switch last {
	case '!', '?', '。', '！', '？':
		return true
	case '.':
	default:
		return false
	}
	if abbreviations[strings.ToLower(strings.TrimLeft(w, `"'“‘([`))] {
		return false
	}
	core := strings.TrimSuffix(strings.TrimRight(w, `"'”’)]`), ".")
	if utf8.RuneCountInString(core) == 1 && unicode.IsUpper([]rune(core)[0]) {
		return false // an initial: "J. Smith"
	}
	first, _ := utf8.DecodeRuneInString(strings.TrimLeft(next, `"'“‘([`))
	return !unicode.IsLower(first) // "3.5 million" never splits: no space after the dot
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further had has
		have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself
		no nor not now of off on once only or other our ours ourselves out over own same she should so some such than that
		the their theirs them themselves then there these they this those through to too under until up very was we were
		what when where which while who whom why will with would you your yours yourself yourselves also may might must
		shall one two us use used using we've it's`) {
		m[w] = true
	}
	return m
}()

// contentWords returns the distinct lowercased words of s that are not stop
// words, with a crude suffix strip so "prices" and "price" meet.
func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.Trim(w, "'")
		if len(w) < 2 || stopwords[w] {
			continue
		}
		out[stem(w)] = true
	}
	return out
}

func stem(w string) string {
	for _, suf := range []string{"ies", "es", "s", "ing", "ed"} {
		if len(w) > len(suf)+3 && strings.HasSuffix(w, suf) {
			if suf == "ies" {
				return w[:len(w)-3] + "y"
			}
			return w[:len(w)-len(suf)]
		}
	}
	return w
}

// textRank returns a score per sentence, and whether each sentence shares
// a content word with any other.
func textRank(ctx context.Context, sents []string) (score []float64, linked []bool, err error) {
	n := len(sents)
	bags := make([]map[string]bool, n)
	for i, s := range sents {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		bags[i] = contentWords(s)
	}
	// Weighted, symmetric adjacency, kept sparse: most sentence pairs
	// share no content word.
	type edge struct {
		to int
		w  float64
	}
	adj := make([][]edge, n)
	out := make([]float64, n) // sum of each node's edge weights
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err // a row is at most 2000 comparisons
		}
		for j := i + 1; j < n; j++ {
			li, lj := len(bags[i]), len(bags[j])
			if li == 0 || lj == 0 {
				continue
			}
			common := 0
			small, big := bags[i], bags[j]
			if li > lj {
				small, big = big, small
			}
			for t := range small {
				if big[t] {
					common++
				}
			}
			if common == 0 {
				continue
			}
			// +1 inside the logs keeps one-word sentences from dividing by 0.
			sim := float64(common) / (math.Log(float64(li)+1) + math.Log(float64(lj)+1))
			adj[i] = append(adj[i], edge{j, sim})
			adj[j] = append(adj[j], edge{i, sim})
			out[i] += sim
			out[j] += sim
		}
	}
	linked = make([]bool, n)
	for i := range adj {
		linked[i] = len(adj[i]) > 0
	}
	const d = 0.85
	score = make([]float64, n)
	next := make([]float64, n)
	for i := range score {
		score[i] = 1
	}
	for iter := 0; iter < 100; iter++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		delta := 0.0
		for i := 0; i < n; i++ {
			sum := 0.0
			for _, e := range adj[i] {
				sum += e.w / out[e.to] * score[e.to]
			}
			next[i] = (1 - d) + d*sum
			delta += math.Abs(next[i] - score[i])
		}
		score, next = next, score
		if delta < 1e-6*float64(n) {
			break
		}
	}
	// Ties (e.g. no overlap at all) favour earlier sentences, which in
	// most documents carry the topic; a tiny positional prior breaks them.
	for i := range score {
		score[i] += 1e-9 * float64(n-i)
	}
	return score, linked, nil
}
