package embeddings

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// tinyPieces builds piece vectors from a vocabulary (piece 0 is the
// unknown piece) with the given log-probabilities and vectors.
func tinyPieces(t *testing.T, pieces []string, scores []float32, vecs []float32, dim int) *Pieces {
	t.Helper()
	var b bytes.Buffer
	if err := WritePieces(&b, pieces, scores, vecs, dim); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPieces(&b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPiecesCutMostProbable: the cut is the segmentation of the highest
// total log-probability, a character no piece covers is the unknown
// piece (a run of them once), and NFKC folds compatibility forms.
func TestPiecesCutMostProbable(t *testing.T) {
	pieces := []string{"<unk>", "▁play", "▁pl", "ay", "s", "▁", "p", "l", "a", "y", "▁plays", "▁list", "▁files"}
	scores := []float32{0, -4, -3, -3, -2, -5, -8, -8, -8, -8, -9, -4, -4}
	vecs := make([]float32, len(pieces)*2)
	p := tinyPieces(t, pieces, scores, vecs, 2)
	for _, c := range []struct {
		in   string
		want []string
	}{
		// ▁play + s = −6 beats ▁pl + ay + s = −8 and ▁plays = −9.
		{"plays", []string{"▁play", "s"}},
		{"list  files", []string{"▁list", "▁files"}},
		{"list жж files", []string{"▁list", "▁", "<unk>", "▁files"}},
		{"ｌｉｓｔ", []string{"▁list"}}, // full-width letters, NFKC
		{"   ", nil},
	} {
		if got := p.Cut(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Cut(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestWritePiecesRoundTrip: vectors survive the int8 file within its
// step, and the same vectors give the same bytes (the same ID).
func TestWritePiecesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"<unk>", "▁a", "▁b", "c"}
	scores := []float32{0, -1, -2, -3}
	vecs := make([]float32, 4*8)
	for i := range vecs {
		vecs[i] = float32(r.NormFloat64())
	}
	var b1, b2 bytes.Buffer
	if err := WritePieces(&b1, pieces, scores, vecs, 8); err != nil {
		t.Fatal(err)
	}
	if err := WritePieces(&b2, pieces, scores, vecs, 8); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("the same vectors wrote different bytes")
	}
	p, err := LoadPieces(bytes.NewReader(b1.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if p.Dim() != 8 || p.Vocabulary() != 4 || !strings.HasPrefix(p.ID(), "pieces:") {
		t.Fatalf("dim %d, vocabulary %d, id %q", p.Dim(), p.Vocabulary(), p.ID())
	}
	for k := 0; k < 4; k++ {
		row := vecs[k*8 : (k+1)*8]
		m := 0.0
		for _, x := range row {
			m = math.Max(m, math.Abs(float64(x)))
		}
		for j, x := range row {
			got := float64(p.tab.scale[k]) * float64(p.tab.q[k*8+j])
			if math.Abs(got-float64(x)) > m/127 {
				t.Fatalf("piece %d coordinate %d: %v read back as %v", k, j, x, got)
			}
		}
	}
	if _, err := LoadPieces(strings.NewReader("not gzip")); err == nil {
		t.Fatal("a file that is not piece vectors loaded")
	}
}

// TestTrainPiecesReproducesTargets: when the targets are averages of
// hidden per-piece vectors, the fit recovers them from texts alone: the
// training texts and texts never seen in the fit embed next to their
// targets, far nearer than the initial vectors put them.
func TestTrainPiecesReproducesTargets(t *testing.T) {
	const n, dim = 40, 16
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"<unk>"}
	scores := []float32{0}
	hidden := [][]float64{nil}
	initial := [][]float32{make([]float32, dim)}
	for i := 1; i < n; i++ {
		pieces = append(pieces, fmt.Sprintf("▁w%c%c", 'a'+i/26, 'a'+i%26))
		scores = append(scores, -6)
		h := make([]float64, dim)
		in := make([]float32, dim)
		for j := range h {
			h[j] = r.NormFloat64()
			in[j] = float32(r.NormFloat64())
		}
		hidden = append(hidden, h)
		initial = append(initial, in)
	}
	text := func() (string, []float32) {
		k := 2 + r.IntN(4)
		var words []string
		sum := make([]float64, dim)
		for range k {
			i := 1 + r.IntN(n-1)
			words = append(words, strings.TrimPrefix(pieces[i], "▁"))
			for j, x := range hidden[i] {
				sum[j] += x
			}
		}
		v := make([]float32, dim)
		for j, x := range sum {
			v[j] = float32(x)
		}
		return strings.Join(words, " "), v
	}
	teach := PieceTeacher{Pieces: pieces, Scores: scores, Initial: initial}
	for range 400 {
		s, v := text()
		teach.Texts = append(teach.Texts, s)
		teach.Targets = append(teach.Targets, v)
	}
	var out bytes.Buffer
	if err := TrainPieces(context.Background(), teach, &out, PieceTrainOptions{Lambda: 1e-4, Dim: -1}); err != nil {
		t.Fatal(err)
	}
	fitted, err := LoadPieces(&out)
	if err != nil {
		t.Fatal(err)
	}
	var flat []float32
	for _, v := range initial {
		flat = append(flat, v...)
	}
	before := tinyPieces(t, pieces, scores, flat, dim)
	meanCos := func(p *Pieces, texts []string, targets [][]float32) float64 {
		vs, err := p.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i, v := range vs {
			s += wcos(v, unit(targets[i]))
		}
		return s / float64(len(vs))
	}
	var unseen []string
	var unseenT [][]float32
	for range 50 {
		s, v := text()
		unseen, unseenT = append(unseen, s), append(unseenT, v)
	}
	train := meanCos(fitted, teach.Texts, teach.Targets)
	test := meanCos(fitted, unseen, unseenT)
	base := meanCos(before, unseen, unseenT)
	if train < 0.98 || test < 0.98 || base > 0.5 {
		t.Fatalf("mean cosine with the targets: training texts %.3f, unseen texts %.3f (initial vectors %.3f); want ≥ 0.98, ≥ 0.98 and the initial far below", train, test, base)
	}
}

// TestBlendWithPieces: a blend with a pieces share is one dot product of
// the three parts' weighted cosines, and asks for piece vectors.
func TestBlendWithPieces(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewBlend(m, BlendOptions{PieceWeight: 0.2}); err == nil {
		t.Fatal("a pieces share without piece vectors was accepted")
	}
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"<unk>", "▁list", "▁the", "▁issues", "▁of", "▁a", "▁GitHub", "▁repository", "▁show", "▁open", "▁bugs", "▁in", "▁my", "▁code", "base"}
	scores := make([]float32, len(pieces))
	vecs := make([]float32, len(pieces)*6)
	for i := range vecs {
		vecs[i] = float32(r.NormFloat64())
	}
	for i := range scores {
		scores[i] = -5
	}
	p := tinyPieces(t, pieces, scores, vecs, 6)
	b, err := NewBlend(m, BlendOptions{WordWeight: 0.4, PieceWeight: 0.2, Pieces: p})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"list the issues of a GitHub repository", "show open bugs in my codebase"}
	ctx := context.Background()
	bv, _ := b.Embed(ctx, texts)
	mv, _ := m.Embed(ctx, texts)
	wv, _ := b.Words().Embed(ctx, texts)
	pv, _ := p.Embed(ctx, texts)
	want := 0.4*wcos(unit(mv[0]), unit(mv[1])) + 0.4*wcos(wv[0], wv[1]) + 0.2*wcos(pv[0], pv[1])
	if got := wcos(bv[0], bv[1]); math.Abs(got-want) > 1e-4 {
		t.Fatalf("blend dot %.5f, want 0.4·cos_model + 0.4·cos_words + 0.2·cos_pieces = %.5f", got, want)
	}
	if len(bv[0]) != b.Dim() || b.Dim() != m.Dim()+b.Words().Dim()+6 {
		t.Fatalf("vector length %d, Dim %d", len(bv[0]), b.Dim())
	}
	if !strings.Contains(b.ID(), p.ID()) {
		t.Fatalf("blend ID %q does not name the piece vectors", b.ID())
	}
}
