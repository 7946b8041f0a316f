package embeddings

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// DocBiaser is an embedder that corrects the dense scores of documents
// that lie near many requests whatever is asked (hubs): DocBias answers,
// per stored row, what the index subtracts from that document's dense
// score when it ranks (nil: nothing).
type DocBiaser interface {
	DocBias(ctx context.Context, rows []float32, dim int) ([]float32, error)
}

// HubOptions configure a hubness correction (cross-domain similarity local
// scaling, CSLS: Conneau et al., 2018, "Word translation without parallel
// data"): a tool's dense score loses Weight times the mean of its K best
// cosines with a fixed set of reference requests. A model places the
// tools it was trained on close to the requests it was trained on, and
// any tool whose text is near many requests draws requests meant for
// others; measured against the same reference requests, such a tool pays
// for that closeness, and a tool the model never saw competes on what the
// request says. The zero value means the defaults.
type HubOptions struct {
	// Weight of the correction (0: DefaultHubWeight; negative: none).
	Weight float64
	// K reference requests averaged per tool (default DefaultHubK).
	K int
	// Refs are the reference requests (nil: DefaultHubRefs, the requests
	// the committed model was trained on).
	Refs []string
}

// The defaults of HubOptions: the best mean NDCG@10 over the development
// splits (EVALS.md, "hubness"); refit them when the model is retrained.
const (
	DefaultHubWeight = 0.3
	DefaultHubK      = 5
)

func (o *HubOptions) defaults() {
	if o.Weight == 0 {
		o.Weight = DefaultHubWeight
	}
	if o.K <= 0 {
		o.K = DefaultHubK
	}
}

// The committed reference requests: the training requests of the
// committed tool model, one per line, as `airs train retrieval --hub-refs
// FILE` writes them.
//
//go:embed model/hubrefs.txt.gz
var defaultHubRefsBytes []byte

var defaultHubRefs = sync.OnceValues(func() ([]string, error) { return ReadHubRefs(bytes.NewReader(defaultHubRefsBytes)) })

// DefaultHubRefs are the committed reference requests (read once).
func DefaultHubRefs() ([]string, error) { return defaultHubRefs() }

// ReadHubRefs reads reference requests written by WriteHubRefs.
func ReadHubRefs(r io.Reader) ([]string, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embeddings: reference requests: %w", err)
	}
	defer zr.Close()
	var out []string
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			out = append(out, t)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("embeddings: reference requests: %w", err)
	}
	return out, nil
}

// WriteHubRefs writes reference requests, one per line (line breaks in a
// request become spaces), gzipped with no time stamp: the same requests
// give the same bytes.
func WriteHubRefs(w io.Writer, refs []string) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	for _, r := range refs {
		r = strings.Join(strings.Fields(r), " ")
		if r == "" {
			continue
		}
		bw.WriteString(r)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// The committed reference requests' vectors under the default blend
// (`airs train retrieval --hub-vectors FILE`): embedding 7,291 requests
// takes half a second, which every index of the default blend would pay
// once per process. They apply only to the embedder whose key they carry
// (hubKey): any other blend embeds the requests itself.
//
//go:embed model/hubvecs.bin.gz
var defaultHubVecsBytes []byte

const hubVecsMagic = "AIRSHV1\n"

// hubKey names the committed reference requests under emb: vectors are
// reused only for the same embedder and the same requests.
func hubKey(emb Embedder) string {
	sum := sha256.Sum256(defaultHubRefsBytes)
	return emb.ID() + "|refs:" + hex.EncodeToString(sum[:8])
}

// HubVectors embeds the committed reference requests with emb and
// answers them as `model/hubvecs.bin.gz` holds them: emb's key, then each
// unit vector as int8 with a float32 scale, gzipped.
func HubVectors(ctx context.Context, emb Embedder) ([]byte, error) {
	refs, err := DefaultHubRefs()
	if err != nil {
		return nil, err
	}
	vs, err := emb.Embed(ctx, refs)
	if err != nil {
		return nil, err
	}
	dim := emb.Dim()
	var raw bytes.Buffer
	raw.WriteString(hubVecsMagic)
	key := hubKey(emb)
	le := binary.LittleEndian
	raw.Write(le.AppendUint32(nil, uint32(len(key))))
	raw.WriteString(key)
	raw.Write(le.AppendUint32(nil, uint32(len(vs))))
	raw.Write(le.AppendUint32(nil, uint32(dim)))
	for _, v := range vs {
		if len(v) != dim {
			return nil, fmt.Errorf("embeddings: a reference request's vector has %d dimensions, want %d", len(v), dim)
		}
		u := normalize32(v)
		var m float32
		for _, x := range u {
			m = max(m, float32(math.Abs(float64(x))))
		}
		scale := m / 127
		raw.Write(le.AppendUint32(nil, math.Float32bits(scale)))
		for _, x := range u {
			q := int8(0)
			if scale > 0 {
				q = int8(math.Round(float64(x / scale)))
			}
			raw.WriteByte(byte(q))
		}
	}
	var out bytes.Buffer
	zw, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// readHubVectors reads HubVectors' bytes: the key and the rows (unit
// vectors, back to back), or ok false when b holds none.
func readHubVectors(b []byte) (key string, rows []float32, dim int, ok bool) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", nil, 0, false
	}
	raw, err := io.ReadAll(zr)
	if err != nil || !bytes.HasPrefix(raw, []byte(hubVecsMagic)) {
		return "", nil, 0, false
	}
	raw = raw[len(hubVecsMagic):]
	le := binary.LittleEndian
	if len(raw) < 4 {
		return "", nil, 0, false
	}
	kn := int(le.Uint32(raw))
	if len(raw) < 4+kn+8 {
		return "", nil, 0, false
	}
	key = string(raw[4 : 4+kn])
	raw = raw[4+kn:]
	n, d := int(le.Uint32(raw)), int(le.Uint32(raw[4:]))
	raw = raw[8:]
	if d <= 0 || len(raw) != n*(4+d) {
		return "", nil, 0, false
	}
	rows = make([]float32, n*d)
	for i := range n {
		rec := raw[i*(4+d) : (i+1)*(4+d)]
		scale := math.Float32frombits(le.Uint32(rec))
		for j, q := range rec[4:] {
			rows[i*d+j] = float32(int8(q)) * scale
		}
	}
	return key, rows, d, true
}

// hubness holds the reference requests' vectors, embedded on first use.
type hubness struct {
	opts HubOptions
	once sync.Once
	refs []float32 // len(refs) × dim, unit rows
	dim  int
	err  error
}

// hubBlock is how many tools' cosines with every reference request one
// matrix product computes.
const hubBlock = 256

// bias answers Weight × the mean of each row's K best cosines with the
// reference requests, embedded by emb on first use.
func (h *hubness) bias(ctx context.Context, emb Embedder, rows []float32, dim int) ([]float32, error) {
	h.once.Do(func() {
		refs := h.opts.Refs
		if refs == nil {
			if key, rows, d, ok := readHubVectors(defaultHubVecsBytes); ok && d == dim && key == hubKey(emb) {
				h.refs, h.dim = rows, d
				return
			}
			if refs, h.err = DefaultHubRefs(); h.err != nil {
				return
			}
		}
		vs, err := emb.Embed(ctx, refs)
		if err != nil {
			h.err = err
			return
		}
		h.dim = dim
		h.refs = make([]float32, 0, len(vs)*dim)
		for _, v := range vs {
			if len(v) == dim {
				h.refs = append(h.refs, normalize32(v)...)
			}
		}
	})
	if h.err != nil {
		return nil, h.err
	}
	if dim <= 0 || dim != h.dim {
		return nil, nil
	}
	n, r := len(rows)/dim, len(h.refs)/dim
	if n == 0 || r == 0 {
		return nil, nil
	}
	out := make([]float32, n)
	k := min(h.opts.K, r)
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(runtime.GOMAXPROCS(0), 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]float32, hubBlock*r)
			top := make([]float32, k)
			for lo := range next {
				hi := min(lo+hubBlock, n)
				b := hi - lo
				blas32.Gemm(blas.NoTrans, blas.Trans, 1,
					blas32.General{Rows: b, Cols: dim, Stride: dim, Data: rows[lo*dim : hi*dim]},
					blas32.General{Rows: r, Cols: dim, Stride: dim, Data: h.refs},
					0, blas32.General{Rows: b, Cols: r, Stride: r, Data: c[:b*r]})
				for i := range b {
					out[lo+i] = float32(h.opts.Weight * meanOfBest(c[i*r:(i+1)*r], top))
				}
			}
		}()
	}
	for lo := 0; lo < n; lo += hubBlock {
		if ctx.Err() != nil {
			break
		}
		next <- lo
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// meanOfBest is the mean of the len(top) largest of xs (top is scratch).
func meanOfBest(xs, top []float32) float64 {
	k := 0 // top[:k] holds the largest so far, largest first
	for _, x := range xs {
		if k == len(top) {
			if x <= top[k-1] {
				continue
			}
			k-- // the least makes room
		}
		j := k
		for j > 0 && top[j-1] < x {
			top[j] = top[j-1]
			j--
		}
		top[j] = x
		k++
	}
	var s float64
	for _, x := range top[:k] {
		s += float64(x)
	}
	return s / float64(max(k, 1))
}
