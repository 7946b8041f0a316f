package retrieval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/airs-dev/airs/embeddings"
)

// DistillTexts are the texts a sentence encoder is distilled on
// (embeddings.TrainPieces): every training tool's text and every training
// request, as TrainingData chooses them (no dev, test or held-out tool or
// request, no MCP list), each once, in a fixed order.
func DistillTexts(ctx context.Context, o TrainOptions) ([]string, error) {
	set, _, err := TrainingData(ctx, &o)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var tools []string
	for _, t := range set.Corpus {
		t = clip(t, maxDistillText)
		if !seen[t] {
			seen[t] = true
			tools = append(tools, t)
		}
	}
	slices.Sort(tools) // the corpus is a map: sorted, the same run writes the same file
	out := tools
	for _, ex := range set.Examples {
		if q := clip(ex.Query, maxDistillText); !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out, nil
}

// maxDistillText bounds a distilled text (bytes, cut at a rune): the
// encoder's cost grows with the square of a text's length, and a tool's
// first 2,000 bytes say what it is for.
const maxDistillText = 2000

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// WriteDistillTexts writes texts as JSON strings, one per line: the input
// of scripts/teacher/embed.js.
func WriteDistillTexts(w io.Writer, texts []string) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, t := range texts {
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadTeacher reads what scripts/teacher wrote into dir: vocab.jsonl (per
// piece of the encoder's vocabulary, in order: {"p": piece, "s":
// log-probability or null, "v": the encoder's vector of the piece alone})
// and texts.jsonl ({"t": text, "v": the encoder's vector of it}).
func ReadTeacher(dir string) (embeddings.PieceTeacher, error) {
	var t embeddings.PieceTeacher
	err := readJSONLines(filepath.Join(dir, "vocab.jsonl"), func(b []byte) error {
		var r struct {
			P string    `json:"p"`
			S *float32  `json:"s"`
			V []float32 `json:"v"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		s := float32(-20)
		if r.S != nil {
			s = *r.S
		}
		t.Pieces, t.Scores, t.Initial = append(t.Pieces, r.P), append(t.Scores, s), append(t.Initial, r.V)
		return nil
	})
	if err != nil {
		return t, err
	}
	err = readJSONLines(filepath.Join(dir, "texts.jsonl"), func(b []byte) error {
		var r struct {
			T string    `json:"t"`
			V []float32 `json:"v"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		t.Texts, t.Targets = append(t.Texts, r.T), append(t.Targets, r.V)
		return nil
	})
	return t, err
}

func readJSONLines(path string, each func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("retrieval: teacher: %w (run `make pieces`, which writes it with scripts/teacher)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<26)
	line := 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := each(sc.Bytes()); err != nil {
			return fmt.Errorf("retrieval: teacher: %s:%d: %w", path, line, err)
		}
	}
	return sc.Err()
}
