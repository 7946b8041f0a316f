package retrieval

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// RerankOptions configure FitReranker.
type RerankOptions struct {
	// Depth is how many fused candidates are re-ranked [50].
	Depth int
	// L2s are the ridge penalties tried [1, 10, 100]; the one with the
	// best cross-validated mean NDCG@10 is kept.
	L2s []float64
	// Folds of the cross-validation [5].
	Folds int
	// PerRequest gives each development request the same weight; by
	// default each development set weighs the same, so that MetaTool's
	// thousands of requests do not decide StableToolBench's ranking.
	PerRequest bool
	// Trees are the numbers of boosted trees tried on top of the linear
	// part [0: linear only]; the cross-validation picks among them too.
	Trees []int
	// Boost tunes the trees (zero: defaults).
	Boost embeddings.BoostOptions
	// Use names the features the fit may weigh (nil: RerankUse).
	Use []string
	// NoLambda fits plain RankNet pairs instead of LambdaRank's
	// (embeddings.RerankTrainOptions.Lambda).
	NoLambda bool
	// TrainOn, when set, keeps only the development sets it accepts (by
	// name) in the fit; every set is still scored.
	TrainOn func(set string) bool
	// Known are the ToolKeys of the tools the model was trained on
	// (TrainingToolKeys), recorded in the reranker for its "known"
	// features.
	Known []string
	// Final fits a reranker of the search's final list (parts searched and
	// fused: embeddings.Index.FinalCandidates) rather than of the whole
	// request's fused list.
	Final bool
	// WholeOnly (with Final) fits and applies the reranker only to
	// requests searched whole; those searched part by part keep their
	// fused order (and are scored so).
	WholeOnly bool
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// TrainingToolKeys are the ToolKeys of every tool Train puts in the
// model's training corpus (the tools of TrainingFiles and BFCL
// multi-turn, held-out tools excluded), sorted.
func TrainingToolKeys(dataDir string) ([]string, error) {
	var paths []string
	for _, f := range TrainingFiles {
		paths = append(paths, filepath.Join(dataDir, f))
	}
	sets, err := Load(paths)
	if err != nil {
		return nil, err
	}
	mt, err := loadMultiTurn(filepath.Join(dataDir, "bfcl_multi_turn"))
	if err != nil {
		return nil, err
	}
	sets = append(sets, mt)
	var keys []string
	for i := range sets {
		for j := range sets[i].Docs {
			if !HeldOutTool(&sets[i], sets[i].Docs[j].ID) {
				keys = append(keys, embeddings.ToolKey(&sets[i].Docs[j]))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// RerankSetReport is one development set's cross-validated figures.
type RerankSetReport struct {
	Set      string  `json:"set"`
	N        int     `json:"n"`
	Fused    float64 `json:"fused_ndcg10"`
	Reranked float64 `json:"reranked_ndcg10"` // out of fold
	// Found is the share of requests with a right tool among the candidates.
	Found float64 `json:"found"`
}

// RerankReport is what FitReranker measured and chose.
type RerankReport struct {
	L2       float64           `json:"l2"`
	Trees    int               `json:"trees"`
	Sets     []RerankSetReport `json:"sets"`
	CVMean   float64           `json:"cv_mean_ndcg10"`
	FusedAvg float64           `json:"fused_mean_ndcg10"`
}

// rerankGroups are a set's requests as reranker training groups over the
// model's fused candidates (re-ranking off).
func rerankGroups(ctx context.Context, ds Dataset, emb embeddings.Embedder, depth int, known map[string]bool, final, wholeOnly bool) ([]embeddings.RerankGroup, error) {
	o := embeddings.Options{Dir: "", NoRerank: true}
	ix, err := embeddings.Open(ctx, emb, o)
	if err != nil {
		return nil, err
	}
	if _, err := ix.Sync(ctx, ds.Docs); err != nil {
		return nil, err
	}
	out := make([]embeddings.RerankGroup, 0, len(ds.Queries))
	for _, q := range ds.Queries {
		candidates := ix.Candidates
		if final {
			candidates = ix.FinalCandidates
		}
		hits, rows, err := candidates(ctx, q.Text, depth, known)
		if err != nil {
			return nil, err
		}
		gold := map[string]bool{}
		for _, g := range q.Gold {
			gold[g] = true
		}
		g := embeddings.RerankGroup{Rows: rows, Relevant: make([]bool, len(hits)), Gold: len(gold), Weight: 1,
			Fixed: wholeOnly && embeddings.RequestParts(q.Text, embeddings.PartsOptions{}) != nil}
		for i, h := range hits {
			g.Relevant[i] = gold[h.ID]
		}
		out = append(out, g)
	}
	return out, nil
}

// RerankUse are the features FitReranker weighs by default: all but the
// model's strength on its own and the "known" ones. Alone, a tool's
// strength (how strongly the trained table answers to its text) says "a
// tool the model was trained on" or not, and a split by tool rewards
// favouring the tools it was not (every held-out-tool request's answer is
// one); weighed only through its products with the two lists' scores, it
// says how far to trust each. The "known" features (exact membership in
// the training tools, --reranker-features) were measured as a variant.
func RerankUse() []string {
	var out []string
	for _, f := range embeddings.RerankFeatures {
		if f != "strength" && !strings.Contains(f, "known") {
			out = append(out, f)
		}
	}
	return out
}

// FitReranker fits the reranker over the embedder's fused list on the
// development sets (dev and unseen-dev: DevSets), choosing its ridge
// penalty and trees by cross-validation with folds by tool (foldKey), so
// that what is scored out of fold is tools the fit never saw, and reports each set's out-of-fold
// NDCG@10 against the fused list's. The final reranker is fitted on all
// the development requests with the chosen penalty.
func FitReranker(ctx context.Context, emb embeddings.Embedder, devSets []Dataset, o RerankOptions) (*embeddings.Reranker, RerankReport, error) {
	if o.Depth <= 0 {
		o.Depth = 50
	}
	if len(o.L2s) == 0 {
		o.L2s = []float64{1, 10, 100}
	}
	if len(o.Use) == 0 {
		o.Use = RerankUse()
	}
	if o.Folds <= 1 {
		o.Folds = 5
	}
	var rep RerankReport
	sets := make([][]embeddings.RerankGroup, len(devSets))
	folds := make([][]int, len(devSets))
	for s, ds := range devSets {
		gs, err := rerankGroups(ctx, ds, emb, o.Depth, embeddings.KnownTools(o.Known), o.Final, o.WholeOnly)
		if err != nil {
			return nil, rep, fmt.Errorf("%s: %w", ds.Name, err)
		}
		if !o.PerRequest && len(gs) > 0 {
			for i := range gs {
				gs[i].Weight = 1000 / float64(len(gs))
			}
		}
		sets[s] = gs
		folds[s] = make([]int, len(gs))
		for i, q := range ds.Queries {
			folds[s][i] = int(hashMod("rerank-fold:"+foldKey(q), uint64(o.Folds)))
		}
		progress(o.Progress, "reranker: %s: %d requests, %d candidates each", ds.Name, len(gs), o.Depth)
	}
	topts := embeddings.RerankTrainOptions{Depth: o.Depth, Embedder: emb.ID(), Lambda: !o.NoLambda, Use: o.Use}
	if len(o.Trees) == 0 {
		o.Trees = []int{0}
	}
	fit := func(train []embeddings.RerankGroup, trees int) (*embeddings.Reranker, error) {
		r, err := embeddings.TrainReranker(train, topts)
		if err != nil || trees == 0 {
			return r, err
		}
		bo := o.Boost
		bo.Trees = trees
		return embeddings.BoostReranker(r, train, bo), nil
	}
	best := -1.0
	for _, cfg := range grid(o.L2s, o.Trees) {
		l2, trees := cfg.l2, cfg.trees
		topts.L2 = l2
		scores := make([]float64, len(sets))
		counts := make([]int, len(sets))
		for f := 0; f < o.Folds; f++ {
			var train []embeddings.RerankGroup
			for s := range sets {
				if o.TrainOn != nil && !o.TrainOn(devSets[s].Name) {
					continue
				}
				for i, g := range sets[s] {
					if folds[s][i] != f && !g.Fixed {
						train = append(train, g)
					}
				}
			}
			r, err := fit(train, trees)
			if err != nil {
				return nil, rep, err
			}
			for s := range sets {
				var test []embeddings.RerankGroup
				for i, g := range sets[s] {
					if folds[s][i] == f {
						test = append(test, g)
					}
				}
				scores[s] += r.NDCG10(test) * float64(len(test))
				counts[s] += len(test)
			}
		}
		mean := 0.0
		var srep []RerankSetReport
		fusedMean := 0.0
		for s := range sets {
			v := scores[s] / float64(max(counts[s], 1))
			fv := (*embeddings.Reranker)(nil).NDCG10(sets[s])
			mean += v
			fusedMean += fv
			found := 0
			for _, g := range sets[s] {
				if slices.Contains(g.Relevant, true) {
					found++
				}
			}
			srep = append(srep, RerankSetReport{Set: devSets[s].Name, N: len(sets[s]), Fused: round4(fv), Reranked: round4(v),
				Found: round4(float64(found) / float64(max(len(sets[s]), 1)))})
		}
		mean /= float64(len(sets))
		fusedMean /= float64(len(sets))
		progress(o.Progress, "reranker: L2 %g, %d trees: cross-validated mean NDCG@10 %.4f (fused %.4f) %+v", l2, trees, mean, fusedMean, srep)
		if mean > best {
			best = mean
			rep = RerankReport{L2: l2, Trees: trees, Sets: srep, CVMean: round4(mean), FusedAvg: round4(fusedMean)}
		}
	}
	topts.L2 = rep.L2
	var all []embeddings.RerankGroup
	for s, gs := range sets {
		if o.TrainOn != nil && !o.TrainOn(devSets[s].Name) {
			continue
		}
		for _, g := range gs {
			if !g.Fixed {
				all = append(all, g)
			}
		}
	}
	r, err := fit(all, rep.Trees)
	if err != nil {
		return nil, rep, err
	}
	r.Final, r.WholeOnly = o.Final, o.Final && o.WholeOnly
	if slices.Contains(o.Use, "known") || slices.Contains(o.Use, "dense_rel_known") || slices.Contains(o.Use, "bm25_rel_known") {
		r.Known = o.Known
	}
	data := "dev and unseen-dev of metatool and stabletoolbench"
	for _, ds := range devSets {
		if !strings.Contains(ds.Name, "/") { // not a part of a split set
			data += ", " + ds.Name
		}
	}
	r.Train = map[string]any{"data": data, "split_salt": SplitSalt,
		"l2": rep.L2, "trees": rep.Trees, "folds": o.Folds, "per_request": o.PerRequest, "lambda": !o.NoLambda, "features_used": o.Use, "depth": o.Depth, "final": o.Final, "whole_only": o.WholeOnly, "cv_mean_ndcg10": rep.CVMean, "fused_mean_ndcg10": rep.FusedAvg}
	return r, rep, nil
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

type rerankConfig struct {
	l2    float64
	trees int
}

// grid is every pair of a penalty and a number of trees.
func grid(l2s []float64, trees []int) []rerankConfig {
	var out []rerankConfig
	for _, t := range trees {
		for _, l := range l2s {
			out = append(out, rerankConfig{l, t})
		}
	}
	return out
}

// foldKey places a request in a cross-validation fold by its first right
// tool's group (a RapidAPI tool's endpoints, a MetaTool plugin), so that a
// fold's tools are absent from the others: a reranker that learned to
// favour particular tools scores no better out of fold.
func foldKey(q Query) string {
	if len(q.Gold) == 0 {
		return "query:" + strings.ToLower(q.Text)
	}
	g := slices.Min(q.Gold)
	if i := strings.IndexByte(g, '/'); i >= 0 {
		g = g[:i]
	}
	return "tool:" + strings.ToLower(g)
}
