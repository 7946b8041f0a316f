package retrieval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airs-dev/airs/embeddings"
)

// TrainOptions configure Train.
type TrainOptions struct {
	// DataDir is the reference data folder (../shared/data).
	DataDir string
	// Model tunes the model and its training (zero: defaults).
	Model embeddings.TrainOptions
	// PerToolCap caps the training requests of one gold tool, so that
	// MetaTool's thousands of requests for 160 plugins do not drown the
	// rest (default 30).
	PerToolCap int
	// ToolViews adds, for every training tool, requests made from the
	// tool's own text (its description; its name with its parameters),
	// each paired with the whole tool text: they teach which words tell
	// tools apart over all training tools, not only the few with requests,
	// and that carries to tools never seen.
	ToolViews bool
	// Extra names the extra training sets to add (of ExtraSets; nil:
	// none, the committed model's training).
	Extra []string
	// FusionNorms are the score scalings the fusion fit tries (nil:
	// FusionNorms).
	FusionNorms []string
	// Progress receives progress lines (nil: none).
	Progress io.Writer
}

// TrainReport is what Train did.
type TrainReport struct {
	Examples map[string]int `json:"examples"` // training requests per dataset
	Tools    map[string]int `json:"tools"`    // training tools per dataset
	// Dropped are the extra sets' tools and requests left out because
	// they look like held-out tools or repeat held-out requests.
	DroppedTools    map[string][]string      `json:"dropped_tools,omitempty"`
	DroppedRequests map[string]int           `json:"dropped_requests,omitempty"`
	Fusion          embeddings.FusionWeights `json:"fusion"`
	DevNDCG         float64                  `json:"dev_ndcg10"` // mean over the dev sets, fitted fusion
}

// TrainingFiles are the reference data files the model is trained on,
// relative to the data folder. BFCL's `multiple` category is left out: it
// is the no-LLM selection benchmark (`airs eval bfcl`), which must not see
// its own questions in training. LiveMCPBench and every MCP tool list are
// evaluation data only.
var TrainingFiles = []string{
	"retrieval/metatool_tools.jsonl.gz",
	"retrieval/metatool_queries.jsonl.gz",
	"retrieval/stabletoolbench_queries.jsonl.gz",
	"bfcl/simple_python.jsonl.gz",
	"bfcl/simple_java.jsonl.gz",
	"bfcl/simple_javascript.jsonl.gz",
	"bfcl/parallel.jsonl.gz",
	"bfcl/parallel_multiple.jsonl.gz",
	"bfcl/live_simple.jsonl.gz",
	"bfcl/live_multiple.jsonl.gz",
	"bfcl/live_parallel.jsonl.gz",
	"bfcl/live_parallel_multiple.jsonl.gz",
}

// Train builds the training requests (the train part of the split
// datasets, BFCL and BFCL multi-turn), trains a ToolModel, fits its fusion
// weights on the dev part and returns it. No query of a dev, test or
// unseen part and no held-out tool reaches training: held-out tools are
// removed from the training corpus, so they are neither positives nor
// negatives.
func Train(ctx context.Context, o TrainOptions) (*embeddings.ToolModel, TrainReport, error) {
	set, rep, err := TrainingData(ctx, &o)
	if err != nil {
		return nil, rep, err
	}
	corpus, examples, devSets, pools, extra := set.Corpus, set.Examples, set.DevSets, set.Pools, o.Extra
	progress(o.Progress, "training on %d requests: %v", len(examples), rep.Examples)
	mo := o.Model
	mo.Progress = o.Progress
	if mo.MinedPerQuery > 0 {
		mo.Pools = pools
	}
	m, err := embeddings.TrainModel(ctx, corpus, examples, mo)
	if err != nil {
		return nil, rep, err
	}
	f, score, err := FitFusion(ctx, m, devSets, o.FusionNorms, o.Progress)
	if err != nil {
		return nil, rep, err
	}
	m.SetFusion(f)
	rep.Fusion, rep.DevNDCG = f, score
	info := map[string]any{"split_salt": SplitSalt, "seed": o.Model.Seed, "files": TrainingFiles,
		"bfcl_multi_turn": true, "examples": rep.Examples, "per_tool_cap": o.PerToolCap, "dev_ndcg10": score}
	if o.ToolViews {
		info["tool_views"] = true
	}
	if mo.MinedPerQuery > 0 {
		info["mined_per_query"] = mo.MinedPerQuery
	}
	if mo.Keep > 0 && mo.Keep < 1 {
		info["keep"] = mo.Keep
	}
	if mo.Epochs > 0 {
		info["epochs"] = mo.Epochs
	}
	if len(extra) > 0 {
		info["extra"] = extra
	}
	if mo.IDF {
		info["idf"] = true
	}
	if mo.Batch > 0 {
		info["batch"] = mo.Batch
	}
	if mo.LearningRate > 0 {
		info["lr"] = mo.LearningRate
	}
	m.SetTrainInfo(info)
	return m, rep, nil
}

// TrainingSet is what the tool model is trained on: the training tools'
// texts by key, the training requests, and the dev sets the fusion is
// fitted on.
type TrainingSet struct {
	Corpus   map[string]string
	Examples []embeddings.TrainExample
	DevSets  []Dataset
	Pools    map[string][]string
}

// TrainingData builds the training requests and tools Train uses (o's
// PerToolCap default is filled in).
func TrainingData(ctx context.Context, o *TrainOptions) (TrainingSet, TrainReport, error) {
	rep := TrainReport{Examples: map[string]int{}, Tools: map[string]int{}}
	if o.DataDir == "" {
		return TrainingSet{}, rep, errors.New("retrieval: no data folder: give --data-dir (the reference data, ../shared/data)")
	}
	var paths []string
	for _, f := range TrainingFiles {
		p := filepath.Join(o.DataDir, f)
		if _, err := os.Stat(p); err != nil {
			return TrainingSet{}, rep, fmt.Errorf("retrieval: training file missing: %w", err)
		}
		paths = append(paths, p)
	}
	sets, err := Load(paths)
	if err != nil {
		return TrainingSet{}, rep, err
	}
	mt, err := loadMultiTurn(filepath.Join(o.DataDir, "bfcl_multi_turn"))
	if err != nil {
		return TrainingSet{}, rep, err
	}
	sets = append(sets, mt)
	extra := o.Extra
	if len(extra) > 0 {
		held := HeldOut(sets)
		rep.DroppedTools, rep.DroppedRequests = map[string][]string{}, map[string]int{}
		for _, name := range extra {
			ds, err := LoadExtra(name)
			if err != nil {
				return TrainingSet{}, rep, err
			}
			rep.DroppedTools[name], rep.DroppedRequests[name] = held.Filter(&ds)
			progress(o.Progress, "extra set %s: %d tools, %d requests (dropped as held out: %d tools, %d requests)",
				name, len(ds.Docs), len(ds.Queries), len(rep.DroppedTools[name]), rep.DroppedRequests[name])
			sets = append(sets, ds)
		}
	}
	if o.PerToolCap <= 0 {
		o.PerToolCap = 30
	}

	corpus := map[string]string{}
	var examples []embeddings.TrainExample
	var devSets []Dataset
	pools := map[string][]string{}
	for i := range sets {
		ds := &sets[i]
		key := func(id string) string { return ds.Name + "|" + id }
		var pool []embeddings.Doc
		for _, d := range ds.Docs {
			if HeldOutTool(ds, d.ID) {
				continue
			}
			pool = append(pool, d)
			corpus[key(d.ID)] = embeddings.DenseText(&d)
		}
		rep.Tools[ds.Name] = len(pool)
		for _, d := range pool {
			pools[ds.Name] = append(pools[ds.Name], key(d.ID))
		}
		bm := NewPlainBM25(pool)
		if o.ToolViews {
			for _, d := range pool {
				for _, v := range toolViews(&d) {
					ex := embeddings.TrainExample{Query: v, Gold: []string{key(d.ID)}, Pool: ds.Name}
					top, _ := bm.Rank(ctx, v, 10)
					for _, id := range top {
						if id != d.ID {
							ex.Hard = append(ex.Hard, key(id))
						}
					}
					examples = append(examples, ex)
					rep.Examples[ds.Name+"/views"]++
				}
			}
		}
		perTool := map[string]int{}
		for _, q := range ds.Queries {
			if IsSplit(ds.Name) && SplitQuery(ds, q) != PartTrain {
				continue
			}
			capKey := strings.Join(q.Gold, ",")
			if perTool[capKey] >= o.PerToolCap {
				continue
			}
			perTool[capKey]++
			gold := map[string]bool{}
			ex := embeddings.TrainExample{Query: q.Text, Pool: ds.Name}
			for _, g := range q.Gold {
				gold[g] = true
				ex.Gold = append(ex.Gold, key(g))
			}
			top, _ := bm.Rank(ctx, q.Text, 10)
			for _, id := range top {
				if !gold[id] {
					ex.Hard = append(ex.Hard, key(id))
				}
			}
			examples = append(examples, ex)
			rep.Examples[ds.Name]++
		}
		if IsSplit(ds.Name) {
			devSets = append(devSets, FilterPart(*ds, PartDev), FilterPart(*ds, PartUnseenDev))
		}
	}
	return TrainingSet{Corpus: corpus, Examples: examples, DevSets: devSets, Pools: pools}, rep, nil
}

// toolViews are the requests made from a tool's own text: its
// description, and its name with its parameters' names and descriptions,
// each when it has at least three words.
func toolViews(d *embeddings.Doc) []string {
	var out []string
	if len(strings.Fields(d.Description)) >= 3 {
		out = append(out, d.Description)
	}
	parts := []string{strings.Join(embeddings.Tokens(d.Name), " ")}
	for _, p := range d.Params {
		parts = append(parts, strings.Join(embeddings.Tokens(p.Name), " "), p.Description)
	}
	if v := strings.Join(parts, " "); len(strings.Fields(v)) >= 3 {
		out = append(out, v)
	}
	return out
}

// DevSets are the dev and unseen-dev parts of the split datasets, over
// their whole tool pools: what FitFusion fits on.
func DevSets(dataDir string) ([]Dataset, error) {
	sets, err := Load([]string{filepath.Join(dataDir, TrainingFiles[0]), filepath.Join(dataDir, TrainingFiles[1]), filepath.Join(dataDir, TrainingFiles[2])})
	if err != nil {
		return nil, err
	}
	var out []Dataset
	for _, ds := range sets {
		if IsSplit(ds.Name) {
			out = append(out, FilterPart(ds, PartDev), FilterPart(ds, PartUnseenDev))
		}
	}
	return out, nil
}

// FusionNorms are the score scalings FitFusion tries by default
// (embeddings.Options.Norm): "max" alone, as "minmax" was behind it on the
// dev sets (EVALS.md); trying both doubles the fit.
var FusionNorms = []string{"max"}

// FitFusion picks the fusion weights (dense, BM25, group and name field,
// and how each list's scores are scaled: norms, default FusionNorms) that
// give the best mean NDCG@10 over the dev sets, from a small grid.
func FitFusion(ctx context.Context, m *embeddings.ToolModel, devSets []Dataset, norms []string, prog io.Writer) (embeddings.FusionWeights, float64, error) {
	if len(norms) == 0 {
		norms = FusionNorms
	}
	best, bestScore := embeddings.FusionWeights{}, -1.0
	for _, norm := range norms {
		for _, dense := range []float64{0.25, 0.5, 0.75, 1, 1.5, 2, 3} {
			for _, group := range []float64{-1, 0.3, 0.8, 1.2} {
				for _, name := range []float64{2, 4, 6} {
					fw := embeddings.FusionWeights{Dense: dense, Sparse: 1, Group: group, Name: name, Norm: norm}
					total := 0.0
					for _, ds := range devSets {
						if len(ds.Queries) == 0 {
							continue
						}
						o := embeddings.Options{DenseWeight: dense, SparseWeight: 1, GroupWeight: group, Fields: embeddings.DefaultFields, Norm: norm}
						o.Fields.Name = name
						a, err := NewAIRS(ctx, ds.Docs, m, o)
						if err != nil {
							return best, 0, err
						}
						r, _, err := EvaluateMethod(ctx, ds, a)
						if err != nil {
							return best, 0, err
						}
						total += r.NDCG10
					}
					score := total / float64(max(len(devSets), 1))
					if score > bestScore {
						best, bestScore = fw, score
					}
				}
			}
		}
	}
	progress(prog, "fusion fitted on dev: %+v (mean NDCG@10 %.4f)", best, bestScore)
	return best, bestScore, nil
}

// loadMultiTurn reads BFCL multi-turn base: every user turn is a request,
// the functions its ground-truth calls name are its gold, the 128
// functions of the eight API classes the registry.
func loadMultiTurn(dir string) (Dataset, error) {
	ds := Dataset{Name: "bfcl_multi_turn"}
	read := func(name string, each func(json.RawMessage) error) error {
		recs, err := readRecords(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := each(r); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		return nil
	}
	err := read("functions.jsonl.gz", func(r json.RawMessage) error {
		var f struct {
			Class, Name, Description string
			Parameters               json.RawMessage
		}
		if err := json.Unmarshal(r, &f); err != nil {
			return err
		}
		ds.Docs = append(ds.Docs, embeddings.Doc{ID: f.Name, Name: f.Name, Description: f.Description,
			Group: f.Class, Params: embeddings.ParamsFromSchema(f.Parameters)})
		return nil
	})
	if err != nil {
		return ds, err
	}
	known := map[string]bool{}
	for _, d := range ds.Docs {
		known[d.ID] = true
	}
	err = read("base.jsonl.gz", func(r json.RawMessage) error {
		var c struct {
			ID    string `json:"id"`
			Turns []struct {
				User  string   `json:"user"`
				Calls []string `json:"calls"`
			} `json:"turns"`
		}
		if err := json.Unmarshal(r, &c); err != nil {
			return err
		}
		for i, t := range c.Turns {
			seen := map[string]bool{}
			var gold []string
			for _, call := range t.Calls {
				name, _, _ := strings.Cut(call, "(")
				if known[name] && !seen[name] {
					seen[name] = true
					gold = append(gold, name)
				}
			}
			sort.Strings(gold)
			if t.User == "" || len(gold) == 0 {
				continue
			}
			ds.Queries = append(ds.Queries, Query{ID: fmt.Sprintf("%s#%d", c.ID, i), Text: t.User, Gold: gold})
		}
		return nil
	})
	return ds, err
}

// HubRefs are the requests a model trained under o is trained on, in
// training order (TrainingData's examples): the reference requests of the
// index's hubness correction (embeddings.HubOptions), which must be the
// committed model's own training requests.
func HubRefs(ctx context.Context, o TrainOptions) ([]string, error) {
	set, _, err := TrainingData(ctx, &o)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(set.Examples))
	for _, ex := range set.Examples {
		out = append(out, ex.Query)
	}
	return out, nil
}
