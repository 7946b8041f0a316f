package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airs-dev/airs/embeddings"
)

// TestTeacherToBlend: what scripts/teacher writes is read, distilled, and
// the file the fit writes is what `--embedder blend:pieces=W,piecesfile=F`
// takes; a broken line is reported with its place.
func TestTeacherToBlend(t *testing.T) {
	dir := t.TempDir()
	var vocab, texts bytes.Buffer
	pieces := []string{"<unk>", "▁weather", "▁forecast", "▁for", "▁paris", "▁convert", "▁currency"}
	for i, p := range pieces {
		v := make([]float32, 4)
		v[i%4] = 1
		var s any = -5.0
		if i == 0 {
			s = nil
		}
		json.NewEncoder(&vocab).Encode(map[string]any{"p": p, "s": s, "v": v})
	}
	for _, tx := range []struct {
		t string
		v []float32
	}{{"weather forecast for paris", []float32{1, 0, 0, 0}}, {"convert currency", []float32{0, 1, 0, 0}}} {
		json.NewEncoder(&texts).Encode(map[string]any{"t": tx.t, "v": tx.v})
	}
	os.WriteFile(filepath.Join(dir, "vocab.jsonl"), vocab.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "texts.jsonl"), texts.Bytes(), 0o644)
	teach, err := ReadTeacher(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(teach.Pieces) != len(pieces) || teach.Scores[0] != -20 || len(teach.Texts) != 2 {
		t.Fatalf("read %d pieces (score of the first %v), %d texts", len(teach.Pieces), teach.Scores[0], len(teach.Texts))
	}
	var out bytes.Buffer
	if err := embeddings.TrainPieces(context.Background(), teach, &out, embeddings.PieceTrainOptions{Dim: -1}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pieces.bin.gz")
	os.WriteFile(file, out.Bytes(), 0o644)
	emb, err := NewEmbedder("blend:pieces=0.2,piecesfile="+file, nil, embeddings.LexicalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(emb.ID(), "pieces:") {
		t.Fatalf("embedder %q has no pieces part", emb.ID())
	}
	if _, err := NewEmbedder("blend:pieces=0.2", nil, embeddings.LexicalOptions{}); err == nil {
		t.Fatal("pieces=0.2 without a piecesfile was accepted")
	}
	os.WriteFile(filepath.Join(dir, "texts.jsonl"), []byte("{\"t\": \"a\", \"v\": [1]}\nnot json\n"), 0o644)
	if _, err := ReadTeacher(dir); err == nil || !strings.Contains(err.Error(), "texts.jsonl:2") {
		t.Fatalf("a broken line: %v", err)
	}
}
