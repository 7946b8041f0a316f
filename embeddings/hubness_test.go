package embeddings

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestHubBiasIsTheMeanOfTheBestCosines: a tool's correction is the weight
// times the mean of its K best cosines with the reference requests, as
// computed one by one in float64.
func TestHubBiasIsTheMeanOfTheBestCosines(t *testing.T) {
	model, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	refs := []string{"send an email to my boss", "what is the weather in paris tomorrow",
		"convert 10 dollars to euros", "find flights to tokyo", "read the file notes.txt",
		"create a github issue about the crash", "play some jazz music"}
	h := &hubness{opts: HubOptions{Weight: 0.3, K: 3, Refs: refs}}
	docs := loadFixture(t)[:40]
	texts := make([]string, len(docs))
	for i := range docs {
		texts[i] = DenseText(&docs[i])
	}
	vs, err := model.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	dim := model.Dim()
	var rows []float32
	for _, v := range vs {
		rows = append(rows, normalize32(v)...)
	}
	got, err := h.bias(context.Background(), model, rows, dim)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := model.Embed(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	spread := map[float32]bool{}
	for i := range docs {
		var cos []float64
		for _, r := range rv {
			c, _ := dot64(normalize32(r), rows[i*dim:(i+1)*dim])
			cos = append(cos, c)
		}
		slices.Sort(cos)
		slices.Reverse(cos)
		want := 0.3 * (cos[0] + cos[1] + cos[2]) / 3
		if d := float64(got[i]) - want; d > 1e-5 || d < -1e-5 {
			t.Fatalf("%s: bias %.6f, want %.6f", docs[i].ID, got[i], want)
		}
		spread[got[i]] = true
	}
	if len(spread) < len(docs)/2 {
		t.Fatalf("only %d distinct corrections over %d tools", len(spread), len(docs))
	}
}

func TestMeanOfBest(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for n := 0; n < 40; n++ {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(r.NormFloat64())
		}
		for k := 1; k <= 6; k++ {
			got := meanOfBest(xs, make([]float32, k))
			s := slices.Clone(xs)
			slices.Sort(s)
			slices.Reverse(s)
			m := min(k, n)
			want := 0.0
			for _, x := range s[:m] {
				want += float64(x)
			}
			want /= float64(max(m, 1))
			if d := got - want; d > 1e-9 || d < -1e-9 {
				t.Fatalf("n=%d k=%d: %v, want %v", n, k, got, want)
			}
		}
	}
}

// countingBiaser is the tool model with a correction that counts the rows
// it is asked for.
type countingBiaser struct {
	*ToolModel
	asked []int
}

func (c *countingBiaser) DocBias(_ context.Context, rows []float32, dim int) ([]float32, error) {
	c.asked = append(c.asked, len(rows)/dim)
	out := make([]float32, len(rows)/dim)
	for i := range out {
		out[i] = rows[i*dim] // any function of the row
	}
	return out, nil
}

// TestDocBiasComputedOnlyForNewTools: registering one more tool computes
// one tool's correction; the others keep theirs.
func TestDocBiasComputedOnlyForNewTools(t *testing.T) {
	model, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	e := &countingBiaser{ToolModel: model}
	ix, err := Open(context.Background(), e, Options{})
	if err != nil {
		t.Fatal(err)
	}
	docs := loadFixture(t)
	if _, err := ix.Sync(context.Background(), docs[:len(docs)-1]); err != nil {
		t.Fatal(err)
	}
	before := map[string]float32{}
	for i, d := range ix.st.docs {
		before[d.ID] = ix.st.bias[i]
	}
	if _, err := ix.Sync(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	if len(e.asked) < 2 || e.asked[0] != len(docs)-1 || e.asked[1] != 1 {
		t.Fatalf("corrections asked for %v rows, want [%d 1]", e.asked, len(docs)-1)
	}
	st := ix.st
	for i, d := range st.docs {
		if b, ok := before[d.ID]; ok && st.bias[i] != b {
			t.Fatalf("%s: correction changed %v → %v", d.ID, b, st.bias[i])
		}
		if want := st.vecs[i*st.dim]; st.bias[i] != want {
			t.Fatalf("%s: correction %v, want %v", d.ID, st.bias[i], want)
		}
	}
	// A hit reports the dense score without the correction: what the same
	// index with no correction reports for it (tools without a group: a
	// group's term comes from its members' corrected scores).
	docs = slices.Clone(docs)
	for i := range docs {
		docs[i].Group = ""
	}
	if _, err := ix.Sync(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	plain, err := Open(context.Background(), model, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Sync(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"search the web", "send an email", "list my github repositories"} {
		want := map[string]float64{}
		ph, err := plain.Search(context.Background(), q, 50, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range ph {
			want[h.ID] = h.Dense
		}
		hits, err := ix.Search(context.Background(), q, 50, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range hits {
			w, ok := want[h.ID]
			if !ok || h.DenseRank == 0 {
				continue
			}
			n++
			if d := h.Dense - w; d > 1e-9 || d < -1e-9 {
				t.Fatalf("%q, %s: hit's dense %.6f, without the correction %.6f", q, h.ID, h.Dense, w)
			}
		}
		if n == 0 {
			t.Fatalf("%q: no hit in both lists", q)
		}
	}
}

// TestHubCorrectionChangesTheRanking: with the correction a tool near
// many reference requests loses places it holds without.
func TestHubCorrectionChangesTheRanking(t *testing.T) {
	model, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	docs := loadFixture(t)
	q := "send a message to the team"
	rank := func(o HubOptions) []string {
		b, err := NewBlend(model, BlendOptions{Hub: o})
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Open(context.Background(), b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(context.Background(), q, 10, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	plain := rank(HubOptions{Weight: -1})
	if len(plain) == 0 {
		t.Fatal("no hits")
	}
	// Reference requests that all ask for the plain ranking's first tool.
	first := docs[slices.IndexFunc(docs, func(d Doc) bool { return d.ID == plain[0] })]
	refs := []string{DenseText(&first), first.Description, strings.Join(Tokens(first.Name), " ") + " " + first.Description}
	hub := rank(HubOptions{Weight: 1, K: 3, Refs: refs})
	if len(hub) == 0 || hub[0] == plain[0] {
		t.Fatalf("with reference requests all for %s it still ranks first: %v", plain[0], hub)
	}
}

// TestDefaultHubRefs: the committed reference requests are the committed
// model's training requests (their count and checksum as the model
// README says), and they read back as written.
func TestDefaultHubRefs(t *testing.T) {
	refs, err := DefaultHubRefs()
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 7291 {
		t.Fatalf("%d reference requests, want 7291 (the committed model's training requests)", len(refs))
	}
	sum := sha256.Sum256(defaultHubRefsBytes)
	if got := hex.EncodeToString(sum[:]); got != "9ec56ef4080f96a71324c12c4e8dd08c9a7b8e3e7f3cfb5d9ab4c6f3c2746ed5" {
		t.Fatalf("hubrefs.txt.gz sha256 %s: rewrite it with `airs train retrieval --hub-refs` and update embeddings/model/README.md", got)
	}
	var b bytes.Buffer
	if err := WriteHubRefs(&b, refs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), defaultHubRefsBytes) {
		t.Fatal("writing the committed requests again gives other bytes")
	}
	back, err := ReadHubRefs(bytes.NewReader(b.Bytes()))
	if err != nil || !slices.Equal(back, refs) {
		t.Fatalf("read back %d requests (%v)", len(back), err)
	}
}

// BenchmarkHubReferences is the one-time cost of the default blend's
// hubness correction: the reference requests read and embedded.
func BenchmarkHubReferences(b *testing.B) {
	model, err := DefaultModel()
	if err != nil {
		b.Fatal(err)
	}
	bl, err := NewBlend(model, BlendOptions{})
	if err != nil {
		b.Fatal(err)
	}
	row := make([]float32, bl.Dim())
	row[0] = 1
	for b.Loop() {
		h := &hubness{opts: bl.opts.Hub}
		if _, err := h.bias(context.Background(), bl, row, bl.Dim()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestCommittedHubVectorsAreTheDefaultBlends: the committed vectors are
// the default blend's (the same bytes written again), used by it, and
// within int8 rounding of the vectors it would compute.
func TestCommittedHubVectorsAreTheDefaultBlends(t *testing.T) {
	bl, err := DefaultBlend()
	if err != nil {
		t.Fatal(err)
	}
	key, rows, dim, ok := readHubVectors(defaultHubVecsBytes)
	if !ok || key != hubKey(bl) || dim != bl.Dim() {
		t.Fatalf("committed vectors for %q (dim %d, ok %v); the default blend is %q: rewrite them with `airs train retrieval --hub-vectors embeddings/model/hubvecs.bin.gz`", key, dim, ok, hubKey(bl))
	}
	again, err := HubVectors(context.Background(), bl)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, defaultHubVecsBytes) {
		t.Fatal("the default blend's reference vectors, written again, differ from the committed ones")
	}
	refs, _ := DefaultHubRefs()
	vs, err := bl.Embed(context.Background(), refs[:200])
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		u := normalize32(v)
		for j, x := range u {
			if d := x - rows[i*dim+j]; d > 0.01 || d < -0.01 {
				t.Fatalf("reference %d, coordinate %d: committed %v, computed %v", i, j, rows[i*dim+j], x)
			}
		}
	}
	// The default blend uses them: no embedding at its first index.
	h := &hubness{opts: bl.opts.Hub}
	if _, err := h.bias(context.Background(), bl, make([]float32, dim), dim); err != nil {
		t.Fatal(err)
	}
	if len(h.refs) != len(rows) || h.refs[0] != rows[0] {
		t.Fatal("the default blend embedded its reference requests instead of reading the committed vectors")
	}
}

// TestDenseListBelowZeroStillOrders: a corrected dense list whose best
// score is below 0 (a vague request in a small registry) still orders the
// fused ranking, instead of counting for nothing.
func TestDenseListBelowZeroStillOrders(t *testing.T) {
	st := &state{docs: []Doc{{ID: "b-first"}, {ID: "a-second"}, {ID: "c-third"}}}
	dense := []float64{-0.05, -0.2, -0.3}
	o := Options{}
	o.defaults()
	dl := []Scored{{Doc: 0, Score: dense[0]}, {Doc: 1, Score: dense[1]}, {Doc: 2, Score: dense[2]}}
	hits := st.fuse(dl, nil, func(d int) float64 { return dense[d] }, make([]float64, 3), 3, &o)
	if len(hits) != 3 || hits[0].ID != "b-first" || hits[1].ID != "a-second" || hits[2].ID != "c-third" {
		t.Fatalf("hits %v: want the dense list's order", hits)
	}
	if !(hits[0].Fused > hits[1].Fused && hits[1].Fused >= hits[2].Fused) {
		t.Fatalf("fused %v, %v, %v: want the dense order", hits[0].Fused, hits[1].Fused, hits[2].Fused)
	}
	for _, h := range hits {
		if h.Dense != 0 {
			t.Fatalf("%s: a hit's dense below 0 reads 0, got %v", h.ID, h.Dense)
		}
	}
}
