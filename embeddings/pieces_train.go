package embeddings

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/mat"
)

// PieceTrainOptions tune TrainPieces. The zero value means the defaults.
type PieceTrainOptions struct {
	// Lambda pulls each piece's vector toward the encoder's vector of the
	// piece alone (ridge): pieces the texts rarely use keep that
	// (default DefaultPieceLambda).
	Lambda float64
	// Dim keeps the targets' first Dim principal directions (default
	// DefaultPieceDim; negative or the encoder's width: all, uncentred).
	Dim int
	// Iterations caps the conjugate-gradient steps (default 300).
	Iterations int
	// Progress, when set, is told of the solve's progress.
	Progress func(iter int, residual float64)
}

// Defaults of PieceTrainOptions (chosen on the development splits:
// EVALS.md, "distilled sentence pieces").
const (
	DefaultPieceLambda = 0.01
	DefaultPieceDim    = 128
)

// PieceTeacher is what TrainPieces distils: a sentence encoder's
// vocabulary (piece 0 the unknown piece) with each piece's
// log-probability and the encoder's vector of the piece alone, and the
// encoder's vectors of a corpus of texts.
type PieceTeacher struct {
	Pieces  []string
	Scores  []float32
	Initial [][]float32 // per piece: the encoder's vector of it alone
	Texts   []string
	Targets [][]float32 // per text: the encoder's vector of it
}

// TrainPieces fits one vector per piece so that a text's weighted average
// of its pieces' vectors (as Pieces.Embed computes it, before the final
// normalisation) is as near as possible to the encoder's unit vector of
// the whole text, with a ridge pull toward each piece's vector alone:
// minimise Σ_texts ‖A_t E − T_t‖² + λ ‖E − E₀‖², a linear least-squares
// problem solved by Jacobi-preconditioned conjugate gradient on its
// normal equations (AᵀA + λI) E = AᵀT + λE₀, all columns at once, with A
// sparse (a text uses a few dozen of the pieces). The targets and E₀ are
// first projected on the targets' first Dim principal directions
// (centred), so the vectors are Dim wide. Deterministic; single-threaded.
// The result is written as model/pieces.bin.gz holds it (WritePieces).
func TrainPieces(ctx context.Context, t PieceTeacher, w io.Writer, o PieceTrainOptions) error {
	if o.Lambda <= 0 {
		o.Lambda = DefaultPieceLambda
	}
	if o.Iterations <= 0 {
		o.Iterations = 300
	}
	n := len(t.Pieces)
	if n == 0 || len(t.Scores) != n || len(t.Initial) != n {
		return fmt.Errorf("embeddings: pieces: %d pieces, %d scores, %d initial vectors", n, len(t.Scores), len(t.Initial))
	}
	if len(t.Texts) == 0 || len(t.Texts) != len(t.Targets) {
		return fmt.Errorf("embeddings: pieces: %d texts, %d targets", len(t.Texts), len(t.Targets))
	}
	full := len(t.Initial[0])
	dim := o.Dim
	if dim == 0 {
		dim = DefaultPieceDim
	}
	if dim < 0 || dim > full {
		dim = full
	}
	// A table for cutting: the vocabulary with its initial vectors.
	flat := make([]float32, 0, n*full)
	for i, v := range t.Initial {
		if len(v) != full {
			return fmt.Errorf("embeddings: pieces: piece %d's vector has %d coordinates, want %d", i, len(v), full)
		}
		flat = append(flat, v...)
	}
	var buf bytes.Buffer
	if err := WritePieces(&buf, t.Pieces, t.Scores, flat, full); err != nil {
		return err
	}
	cutter, err := LoadPieces(&buf)
	if err != nil {
		return err
	}
	// The projection: the targets' principal directions (centred), or
	// the identity when every coordinate is kept.
	targets := make([][]float64, len(t.Targets))
	for i, v := range t.Targets {
		if len(v) != full {
			return fmt.Errorf("embeddings: pieces: text %d's target has %d coordinates, want %d", i, len(v), full)
		}
		targets[i] = normalized64(v)
	}
	proj, mean := principalProjection(targets, full, dim)
	project := func(v []float64, center bool) []float64 {
		if proj == nil {
			return v
		}
		out := make([]float64, dim)
		for a := 0; a < dim; a++ {
			s := 0.0
			for j, x := range v {
				if center {
					x -= mean[j]
				}
				s += proj[a*full+j] * x
			}
			out[a] = s
		}
		return out
	}
	// Rows of A.
	type row struct {
		ids []int32
		ws  []float32
	}
	rows := make([]row, len(t.Texts))
	for i, s := range t.Texts {
		ids, ws := cutter.Weights(s)
		rows[i] = row{ids, ws}
	}
	// B = AᵀT + λE₀ and the diagonal of G = AᵀA + λI.
	B := make([]float64, n*dim)
	diag := make([]float64, n)
	for i := range diag {
		diag[i] = o.Lambda
	}
	E0 := make([]float64, n*dim)
	for k, v := range t.Initial {
		p := project(normalized64(v), true)
		copy(E0[k*dim:], p)
		for j, x := range p {
			B[k*dim+j] += o.Lambda * x
		}
	}
	for i, r := range rows {
		if i%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		tp := project(targets[i], true)
		for a, k := range r.ids {
			w := float64(r.ws[a])
			diag[k] += w * w
			for j, x := range tp {
				B[int(k)*dim+j] += w * x
			}
		}
		// Pieces repeated in a text: the cross terms of (Σ w)² on the diagonal.
		for a := range r.ids {
			for b := a + 1; b < len(r.ids); b++ {
				if r.ids[a] == r.ids[b] {
					diag[r.ids[a]] += 2 * float64(r.ws[a]) * float64(r.ws[b])
				}
			}
		}
	}
	mul := func(dst, x []float64) { // dst = (AᵀA + λI) x
		for i := range dst {
			dst[i] = o.Lambda * x[i]
		}
		ax := make([]float64, dim)
		for _, r := range rows {
			clear(ax)
			for a, k := range r.ids {
				w := float64(r.ws[a])
				for j, v := range x[int(k)*dim : (int(k)+1)*dim] {
					ax[j] += w * v
				}
			}
			for a, k := range r.ids {
				w := float64(r.ws[a])
				d := dst[int(k)*dim : (int(k)+1)*dim]
				for j, v := range ax {
					d[j] += w * v
				}
			}
		}
	}
	// Preconditioned CG, each of the dim columns its own system.
	X := append([]float64(nil), E0...)
	R := make([]float64, n*dim)
	mul(R, X)
	for i := range R {
		R[i] = B[i] - R[i]
	}
	Z := make([]float64, n*dim)
	for i := range Z {
		Z[i] = R[i] / diag[i/dim]
	}
	P := append([]float64(nil), Z...)
	rz := colDots(R, Z, dim)
	bnorm := math.Sqrt(sumSquares(B))
	GP := make([]float64, n*dim)
	for it := 1; it <= o.Iterations; it++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		mul(GP, P)
		pgp := colDots(P, GP, dim)
		for i := range X {
			c := i % dim
			if pgp[c] <= 0 {
				continue
			}
			a := rz[c] / pgp[c]
			X[i] += a * P[i]
			R[i] -= a * GP[i]
		}
		res := math.Sqrt(sumSquares(R)) / bnorm
		if o.Progress != nil && (it%25 == 0 || res < 1e-6) {
			o.Progress(it, res)
		}
		if res < 1e-6 {
			break
		}
		for i := range Z {
			Z[i] = R[i] / diag[i/dim]
		}
		rz2 := colDots(R, Z, dim)
		for i := range P {
			c := i % dim
			beta := 0.0
			if rz[c] > 0 {
				beta = rz2[c] / rz[c]
			}
			P[i] = Z[i] + beta*P[i]
		}
		rz = rz2
	}
	out := make([]float32, n*dim)
	for i, x := range X {
		out[i] = float32(x)
	}
	return WritePieces(w, t.Pieces, t.Scores, out, dim)
}

func colDots(a, b []float64, dim int) []float64 {
	out := make([]float64, dim)
	for i, x := range a {
		out[i%dim] += x * b[i]
	}
	return out
}

func sumSquares(a []float64) float64 {
	s := 0.0
	for _, x := range a {
		s += x * x
	}
	return s
}

func normalized64(v []float32) []float64 {
	out := make([]float64, len(v))
	s := 0.0
	for i, x := range v {
		out[i] = float64(x)
		s += float64(x) * float64(x)
	}
	if s > 0 {
		inv := 1 / math.Sqrt(s)
		for i := range out {
			out[i] *= inv
		}
	}
	return out
}

// principalProjection is the first dim principal directions of the rows
// (dim × full, row-major) and their mean; nil when dim is full (the
// identity, uncentred).
func principalProjection(rows [][]float64, full, dim int) ([]float64, []float64) {
	if dim >= full || len(rows) == 0 {
		return nil, make([]float64, full)
	}
	mean := make([]float64, full)
	for _, r := range rows {
		for j, x := range r {
			mean[j] += x
		}
	}
	for j := range mean {
		mean[j] /= float64(len(rows))
	}
	cov := mat.NewSymDense(full, nil)
	c := make([]float64, full)
	for _, r := range rows {
		for j, x := range r {
			c[j] = x - mean[j]
		}
		cov.SymRankOne(cov, 1, mat.NewVecDense(full, c))
	}
	var eig mat.EigenSym
	if !eig.Factorize(cov, true) {
		return nil, make([]float64, full)
	}
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	// Eigenvalues ascend: the last columns are the first directions.
	proj := make([]float64, dim*full)
	for a := 0; a < dim; a++ {
		col := full - 1 - a
		for j := 0; j < full; j++ {
			proj[a*full+j] = vecs.At(j, col)
		}
	}
	return proj, mean
}
