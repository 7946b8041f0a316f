package bfcl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airs-dev/airs/internal/gzfile"
)

// SingleTurnCategories are BFCL's single-turn categories, in the order
// reports list them.
var SingleTurnCategories = []string{
	"simple_python", "simple_java", "simple_javascript",
	"multiple", "parallel", "parallel_multiple", "irrelevance",
	"live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
	"live_irrelevance", "live_relevance",
}

// Message is one chat message of a question.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Function is one candidate function as BFCL documents it. Parameters is
// BFCL's own dialect ("type": "dict", Python/Java/JS type names), decoded with
// numbers kept as json.Number; Translate turns it into JSON Schema.
type Function struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// ExpectedCall is one call of the ground truth: for each parameter the list
// of accepted values. "" among them means the parameter may be omitted.
type ExpectedCall struct {
	Name   string
	Params map[string][]any
}

// Question is one BFCL test entry.
type Question struct {
	ID       string
	Category string
	// Turns is BFCL's "question": a list of turns, each a list of messages.
	// Single-turn categories have exactly one turn.
	Turns     [][]Message
	Functions []Function
	// GroundTruth is nil for the relevance and irrelevance categories.
	GroundTruth []ExpectedCall
}

// Messages returns the messages of the first (only) turn.
func (q Question) Messages() []Message {
	if len(q.Turns) == 0 {
		return nil
	}
	return q.Turns[0]
}

// Text returns the last user message of the first turn: the request.
func (q Question) Text() string {
	msgs := q.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

// Function returns the candidate function with the given name.
func (q Question) Function(name string) (Function, bool) {
	for _, f := range q.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return Function{}, false
}

type rawQuestion struct {
	ID          string                      `json:"id"`
	Question    [][]Message                 `json:"question"`
	Function    []Function                  `json:"function"`
	GroundTruth []map[string]map[string]any `json:"ground_truth"`
}

// ParseQuestion decodes one JSON line of a category file.
func ParseQuestion(line []byte, category string) (Question, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var r rawQuestion
	if err := dec.Decode(&r); err != nil {
		return Question{}, err
	}
	q := Question{ID: r.ID, Category: category, Turns: r.Question, Functions: r.Function}
	for i, fn := range q.Functions {
		if fn.Name == "" {
			return Question{}, fmt.Errorf("%s: function %d has no name", r.ID, i)
		}
		if fn.Parameters == nil {
			q.Functions[i].Parameters = map[string]any{"type": "dict", "properties": map[string]any{}}
		}
	}
	for i, gt := range r.GroundTruth {
		if len(gt) != 1 {
			return Question{}, fmt.Errorf("%s: ground_truth[%d] has %d keys, want 1", r.ID, i, len(gt))
		}
		for name, params := range gt {
			ec := ExpectedCall{Name: name, Params: make(map[string][]any, len(params))}
			for p, v := range params {
				list, ok := v.([]any)
				if !ok {
					return Question{}, fmt.Errorf("%s: ground_truth %s.%s is not a list", r.ID, name, p)
				}
				ec.Params[p] = list
			}
			q.GroundTruth = append(q.GroundTruth, ec)
		}
	}
	return q, nil
}

// CategoryOf returns the category a data file holds, from its name:
// ".../live_simple.jsonl.gz" → "live_simple".
func CategoryOf(path string) string {
	base := filepath.Base(path)
	for _, ext := range []string{".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	return base
}

// LoadFile reads a category file (JSON Lines, gzip-compressed when the name
// ends in .gz).
func LoadFile(path string) ([]Question, error) {
	r, err := gzfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return Load(r, CategoryOf(path))
}

// Load reads JSON Lines of one category.
func Load(r io.Reader, category string) ([]Question, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	var qs []Question
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		q, err := ParseQuestion(line, category)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", category, n, err)
		}
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// FindCategoryFile returns the file of a category in dir.
func FindCategoryFile(dir, category string) (string, error) {
	for _, ext := range []string{".jsonl.gz", ".jsonl", ".json"} {
		p := filepath.Join(dir, category+ext)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("bfcl: no data for category %q in %s", category, dir)
}

// AvailableCategories lists the single-turn categories present in dir, in
// SingleTurnCategories order.
func AvailableCategories(dir string) ([]string, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range SingleTurnCategories {
		if _, err := FindCategoryFile(dir, c); err == nil {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("bfcl: no category files in " + dir)
	}
	return out, nil
}

// IsKnownCategory reports whether c is one of SingleTurnCategories.
func IsKnownCategory(c string) bool { return slices.Contains(SingleTurnCategories, c) }
