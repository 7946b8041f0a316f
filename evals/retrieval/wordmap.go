package retrieval

import (
	"bytes"
	"context"
	"os"

	"github.com/airs-dev/airs/embeddings"
)

// TrainWordMap fits the word vectors' linear map (embeddings.TrainWordMap)
// on the tool model's training requests and tools (TrainingData: no dev,
// test or unseen request, no held-out tool) and writes it to out.
func TrainWordMap(ctx context.Context, o TrainOptions, wo embeddings.WordMapOptions, vo embeddings.WordVectorOptions, out string) error {
	set, rep, err := TrainingData(ctx, &o)
	if err != nil {
		return err
	}
	progress(o.Progress, "word map: training on %d requests: %v", len(set.Examples), rep.Examples)
	w, err := embeddings.NewWordVectors(vo)
	if err != nil {
		return err
	}
	wo.Progress = o.Progress
	m, err := embeddings.TrainWordMap(ctx, w, set.Corpus, set.Examples, wo)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := embeddings.WriteWordMap(&b, m); err != nil {
		return err
	}
	return os.WriteFile(out, b.Bytes(), 0o644)
}

// loadWordMap reads a map TrainWordMap wrote.
func loadWordMap(path string) ([]float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return embeddings.ReadWordMap(f)
}
