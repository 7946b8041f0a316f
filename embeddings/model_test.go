package embeddings

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func cos(a, b []float32) float64 { return float64(dot32(a, b)) }

func TestDefaultModelLoadsAndEncodes(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID(), "tooltext:") || m.Dim() <= 0 {
		t.Fatalf("id %q dim %d", m.ID(), m.Dim())
	}
	if f := m.Fusion(); f.Dense <= 0 || f.Sparse <= 0 {
		t.Fatalf("the committed model carries no fitted fusion weights: %+v", f)
	}
	// A second decode gives the same model (same ID).
	m2, err := ReadDefaultModel()
	if err != nil || m2.ID() != m.ID() {
		t.Fatalf("re-read: %v, id %q vs %q", err, m2.ID(), m.ID())
	}
	v := m.Encode("get the weather forecast for Paris")
	if len(v) != m.Dim() || cos(v, v) < 0.999 {
		t.Fatalf("not a unit vector of dimension %d", m.Dim())
	}
	// The trained model puts a weather request nearer a weather tool than
	// an unrelated one.
	w := m.Encode("weather forecast: current conditions and forecast for a city")
	x := m.Encode("send email: send an email message to a recipient")
	if cos(v, w) <= cos(v, x) {
		t.Fatalf("weather request: %.3f to the weather tool, %.3f to email", cos(v, w), cos(v, x))
	}
}

// Text in other scripts is encoded, not dropped: a Japanese or Chinese
// request is nearest the tool described in its own words.
func TestModelKeepsCJKText(t *testing.T) {
	m, err := DefaultModel()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, good, bad string }{
		{"東京の天気を教えて", "天気予報: 指定した都市の天気を取得します", "メール送信: メールを送ります"},
		{"把这个文件翻译成英文", "翻译: 将文本翻译成指定语言", "天气: 查询城市天气"},
	} {
		q := m.Encode(tc.q)
		if cos(q, q) < 0.999 {
			t.Fatalf("%q encodes to a zero vector", tc.q)
		}
		if g, b := cos(q, m.Encode(tc.good)), cos(q, m.Encode(tc.bad)); g <= b {
			t.Fatalf("%q: %.3f to %q, %.3f to %q", tc.q, g, tc.good, b, tc.bad)
		}
	}
}

func TestToolModelRoundTrip(t *testing.T) {
	m := NewToolModel(ModelHeader{Buckets: 512, Dim: 16}, 7)
	m.SetFusion(FusionWeights{Dense: 1.5, Sparse: 1, Group: 0.3, Name: 2})
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := ReadToolModel(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if r.ID() != m.ID() || r.Fusion() != m.Fusion() || r.Dim() != 16 {
		t.Fatalf("read %s %+v, wrote %s %+v", r.ID(), r.Fusion(), m.ID(), m.Fusion())
	}
	a, b := m.Encode("list files in a folder"), r.Encode("list files in a folder")
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("component %d: %v vs %v", i, a[i], b[i])
		}
	}
	if _, err := ReadToolModel(bytes.NewReader([]byte("not gzip"))); err == nil {
		t.Fatal("garbage accepted")
	}
}

// Training moves a request toward the tool it needs even when they share
// no word, the same seed gives the same weights, and a tool never seen in
// training is still encoded from its text.
func TestTrainModelLearnsAndIsDeterministic(t *testing.T) {
	corpus := map[string]string{
		"forecast": "forecast: conditions for a city",
		"mail":     "mail: deliver a message to an address",
		"convert":  "convert: change an amount between currencies",
		"stocks":   "stocks: share price of a company",
	}
	phr := map[string][]string{
		"forecast": {"will it rain tomorrow", "is it sunny today", "rain or snow this weekend", "how hot will it be"},
		"mail":     {"write to my boss", "notify bob by post", "send a note to alice", "write a letter to the team"},
		"convert":  {"how many euros is ten dollars", "dollars to yen", "exchange rate euros", "yen in pounds"},
		"stocks":   {"how is apple trading", "price of tesla shares", "nasdaq quote for msft", "is google up today"},
	}
	var ex []TrainExample
	for tool, qs := range phr {
		for _, q := range qs {
			var hard []string
			for other := range corpus {
				if other != tool {
					hard = append(hard, other)
				}
			}
			ex = append(ex, TrainExample{Query: q, Gold: []string{tool}, Hard: hard})
		}
	}
	// Stable order: map iteration above is random.
	sortExamples(ex)
	o := TrainOptions{Header: ModelHeader{Buckets: 4096, Dim: 32}, Seed: 3, Epochs: 30, Batch: 8}
	m1, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if m1.ID() != m2.ID() {
		t.Fatalf("same data and seed, different weights: %s vs %s", m1.ID(), m2.ID())
	}
	right := 0
	for tool, qs := range phr {
		for _, q := range qs {
			v := m1.Encode(q)
			best, bestS := "", -2.0
			for k, text := range corpus {
				if s := cos(v, m1.Encode(text)); s > bestS {
					best, bestS = k, s
				}
			}
			if best == tool {
				right++
			}
		}
	}
	if right < 14 {
		t.Fatalf("after training %d of 16 requests find their tool", right)
	}
	if _, err := TrainModel(context.Background(), corpus, []TrainExample{{Query: "x", Gold: []string{"missing"}}}, o); err == nil {
		t.Fatal("a gold tool outside the corpus was accepted")
	}
}

func sortExamples(ex []TrainExample) {
	for i := 1; i < len(ex); i++ {
		for j := i; j > 0 && ex[j].Query < ex[j-1].Query; j-- {
			ex[j], ex[j-1] = ex[j-1], ex[j]
		}
	}
}

// An index over the model takes the fusion weights fitted for it where
// its options leave them unset, and keeps those the caller gives.
func TestIndexTakesFittedFusion(t *testing.T) {
	m := NewToolModel(ModelHeader{Buckets: 256, Dim: 8}, 1)
	m.SetFusion(FusionWeights{Dense: 2.5, Sparse: 0.7, Group: -1, Name: 3})
	ix, err := Open(context.Background(), m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if o := ix.opts; o.DenseWeight != 2.5 || o.SparseWeight != 0.7 || o.GroupWeight != 0 || o.Fields.Name != 3 || o.Fields.Description != DefaultFields.Description {
		t.Fatalf("options %+v", o)
	}
	ix, err = Open(context.Background(), m, Options{DenseWeight: 1, GroupWeight: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if o := ix.opts; o.DenseWeight != 1 || o.GroupWeight != 0.3 || o.SparseWeight != 0.7 {
		t.Fatalf("given options overridden: %+v", o)
	}
}

// toyTraining is four tools and four requests for each that share no word
// with their tool's text.
func toyTraining() (map[string]string, map[string][]string, []TrainExample) {
	corpus := map[string]string{
		"forecast": "forecast: conditions for a city",
		"mail":     "mail: deliver a message to an address",
		"convert":  "convert: change an amount between currencies",
		"stocks":   "stocks: share price of a company",
	}
	phr := map[string][]string{
		"forecast": {"will it rain tomorrow", "is it sunny today", "rain or snow this weekend", "how hot will it be"},
		"mail":     {"write to my boss", "notify bob by post", "send a note to alice", "write a letter to the team"},
		"convert":  {"how many euros is ten dollars", "dollars to yen", "exchange rate euros", "yen in pounds"},
		"stocks":   {"how is apple trading", "price of tesla shares", "nasdaq quote for msft", "is google up today"},
	}
	var ex []TrainExample
	for tool, qs := range phr {
		for _, q := range qs {
			ex = append(ex, TrainExample{Query: q, Gold: []string{tool}, Pool: "toy"})
		}
	}
	sortExamples(ex)
	return corpus, phr, ex
}

// The model's own confusions become negatives when pools are given: the
// training stays deterministic, differs from training without them, and
// still learns the requests.
func TestTrainMinesItsOwnNegatives(t *testing.T) {
	corpus, phr, ex := toyTraining()
	o := TrainOptions{Header: ModelHeader{Buckets: 4096, Dim: 32}, Seed: 3, Epochs: 30, Batch: 4,
		Pools: map[string][]string{"toy": {"convert", "forecast", "mail", "stocks"}}, MinedPerQuery: 2}
	m1, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	o.MinedPerQuery = 0
	m3, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	if m1.ID() != m2.ID() {
		t.Fatalf("same data and seed, different weights: %s vs %s", m1.ID(), m2.ID())
	}
	if m1.ID() == m3.ID() {
		t.Fatal("mined negatives changed nothing")
	}
	right := 0
	for tool, qs := range phr {
		for _, q := range qs {
			v := m1.Encode(q)
			best, bestS := "", -2.0
			for k, text := range corpus {
				if s := cos(v, m1.Encode(text)); s > bestS {
					best, bestS = k, s
				}
			}
			if best == tool {
				right++
			}
		}
	}
	if right < 14 {
		t.Fatalf("after training with mined negatives %d of 16 requests find their tool", right)
	}
}

// Keep mixes the trained table with the initial projection row by row.
func TestTrainKeepMixesTheInitialTable(t *testing.T) {
	corpus, _, ex := toyTraining()
	o := TrainOptions{Header: ModelHeader{Buckets: 512, Dim: 16}, Seed: 5, Epochs: 10, Batch: 4}
	full, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	o.Keep = 0.25
	mixed, err := TrainModel(context.Background(), corpus, ex, o)
	if err != nil {
		t.Fatal(err)
	}
	init := NewToolModel(o.Header, o.Seed)
	d := o.Header.Dim
	at := func(m *ToolModel, i int) float64 { return float64(m.scale[i/d]) * float64(m.q[i]) }
	moved := 0
	for i := range mixed.q {
		want := 0.25*at(full, i) + 0.75*float64(init.w[i])
		tol := float64(full.scale[i/d]+mixed.scale[i/d])*0.5 + 1e-6
		if diff := at(mixed, i) - want; diff > tol || diff < -tol {
			t.Fatalf("entry %d: %.5f, want 0.25·%.5f + 0.75·%.5f", i, at(mixed, i), at(full, i), init.w[i])
		}
		if d := at(full, i) - float64(init.w[i]); d > 0.01 || d < -0.01 {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("training moved no weight: the test checks nothing")
	}
}

// With Norm "minmax" a list's last candidate adds nothing and its best adds
// the list's weight; with the default "max" scores are divided by the best.
func TestFusionNormMinMax(t *testing.T) {
	docs := []Doc{
		{ID: "weather", Name: "weather", Description: "current weather and forecast for a city"},
		{ID: "mail", Name: "send_mail", Description: "send an email message to a recipient"},
		{ID: "files", Name: "list_files", Description: "list the files of a folder"},
	}
	m := NewToolModel(ModelHeader{Buckets: 1024, Dim: 16}, 2)
	fused := func(norm string) []Hit {
		ix, err := Open(context.Background(), m, Options{Norm: norm, SparseWeight: -1, GroupWeight: -1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Sync(context.Background(), docs); err != nil {
			t.Fatal(err)
		}
		hits, err := ix.Search(context.Background(), "weather forecast for paris", 3, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 3 {
			t.Fatalf("%s: %d hits", norm, len(hits))
		}
		return hits
	}
	mm, mx := fused("minmax"), fused("max")
	if mm[0].Fused != 1 || mm[2].Fused != 0 {
		t.Fatalf("minmax: best %.3f, last %.3f; want 1 and 0", mm[0].Fused, mm[2].Fused)
	}
	if mx[0].Fused != 1 || mx[2].Fused <= 0 && mx[2].Dense > 0 {
		t.Fatalf("max: best %.3f, last %.3f (dense %.3f)", mx[0].Fused, mx[2].Fused, mx[2].Dense)
	}
	for i := range mm {
		if mm[i].ID != mx[i].ID {
			t.Fatalf("one list: the scaling changed the order at %d: %s vs %s", i, mm[i].ID, mx[i].ID)
		}
	}
}

// The scaling fitted for a model reaches an index that leaves it unset.
func TestIndexTakesFittedNorm(t *testing.T) {
	m := NewToolModel(ModelHeader{Buckets: 256, Dim: 8}, 1)
	m.SetFusion(FusionWeights{Dense: 1, Sparse: 1, Norm: "minmax"})
	for _, tc := range []struct{ given, want string }{{"", "minmax"}, {"max", "max"}} {
		ix, err := Open(context.Background(), m, Options{Norm: tc.given})
		if err != nil {
			t.Fatal(err)
		}
		if ix.opts.Norm != tc.want {
			t.Fatalf("given %q: norm %q, want %q", tc.given, ix.opts.Norm, tc.want)
		}
	}
}

// With IDF the initial table's row of a feature every text has is scaled
// down more than the row of a feature one text has, and the row of a
// feature no text has keeps its length.
func TestScaleByIDFWeighsRareFeaturesUp(t *testing.T) {
	h := ModelHeader{Buckets: 1 << 16, Dim: 4}
	m := NewToolModel(h, 3)
	init := NewToolModel(h, 3)
	corpus := map[string]string{
		"a": "weather forecast for a city",
		"b": "weather alerts by region",
		"c": "weather radar tiles",
	}
	queries := [][]wfeat{m.textFeatures("weather in Paris")}
	m.scaleByIDF(corpus, queries)
	d := h.Dim
	// ratio is the mean scale of the rows of a word's features (the word,
	// its character n-grams).
	ratio := func(word string) float64 {
		fs := m.textFeatures(word)
		sum := 0.0
		for _, f := range fs {
			a, b := 0.0, 0.0
			for j := 0; j < d; j++ {
				a += abs32(m.w[int(f.row)*d+j])
				b += abs32(init.w[int(f.row)*d+j])
			}
			sum += a / b
		}
		return sum / float64(len(fs))
	}
	common, rare, unseen := ratio("weather"), ratio("radar"), ratio("xylophone")
	if !(common < rare && rare <= 1 && unseen == 1) {
		t.Fatalf("row scale: weather %.3f, radar %.3f, xylophone %.3f; want weather < radar ≤ 1 = xylophone", common, rare, unseen)
	}
}

func abs32(x float32) float64 {
	if x < 0 {
		return float64(-x)
	}
	return float64(x)
}
