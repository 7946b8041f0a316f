package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
	"github.com/airs-dev/airs/internal/atomicfile"
)

var trainCmd = &command{
	Name:    "train",
	Summary: "train the tool-retrieval model on the public reference data",
	Usage: `Usage:
  airs train retrieval [--data-dir DIR] [--out FILE] [--seed N] [--epochs N] [--json]
  airs train retrieval --from-sessions [SESSIONS.jsonl] [--holdout 0.2] [--implicit] [--json]
  airs train retrieval --reranker [--model FILE] [--reranker-out FILE] [--json]
  airs train retrieval --word-map FILE [--epochs N] [--lr X] [--dim K]
  airs train retrieval --hub-refs FILE
  airs train retrieval --hub-vectors FILE
  airs train retrieval --teacher-texts FILE [--extra all]
  airs train retrieval --pieces FILE --teacher DIR [--piece-lambda X] [--piece-dim N]

retrieval trains the tool model the index embeds requests and tools with
(embeddings.ToolModel: hashed words, word bigrams and character n-grams
summed through a learned table, one encoder for requests and tools) on
requests paired with the tools they need: the train part of MetaTool and
StableToolBench, BFCL's single-turn categories except 'multiple' (the
no-LLM benchmark) and BFCL multi-turn. The loss is InfoNCE over the other
requests' tools in the batch and BM25 hard negatives. One in five MetaTool
plugins and RapidAPI tools is held out of training entirely, and of the
other queries 20% are held out (test) and 10% fit the fusion weights
(dev): 'airs eval retrieval --split test|unseen' scores those. No MCP tool
list and no LiveMCPBench data is read.

Training is single-threaded and seeded: the same data, seed and epochs
write the same file. It takes a few minutes on one core. --out defaults to
embeddings/model/tooltext.bin.gz, the model built into airs (rebuild airs
to use it); 'airs eval retrieval --embedder model:FILE' evaluates any file.

Variants, off by default (measured on the dev splits in EVALS.md, "Tool
retrieval: what more training does for unseen tools"; none beat the
defaults): --tool-views adds requests made from each training tool's own
text; --mined N adds N of the model's own best-ranked wrong tools per
request after each epoch; --keep S keeps share S of the trained table and
the rest of the initial projection; --fusion-norm minmax|both also tries
min–max scaling of the two lists in the fusion fit; --idf starts the
table's rows scaled by their features' inverse document frequency;
--batch N sets the requests per step (their tools are each other's
negatives).

--extra all (or a list of sealtools, toolalpaca, apibench) adds public tool
collections with requests written for them, built into airs
(evals/retrieval/data, converted by make_extra_training.py; Seal-Tools,
ToolAlpaca's evaluation APIs and Gorilla's APIBench, all Apache-2.0):
about 4,800 more distinct tools and 4,000 requests. Any of their tools
named or described like a held-out MetaTool or StableToolBench tool, and
any request repeating a held-out request, is dropped first. Measured on
the dev splits (EVALS.md, "more distinct tools"), it did not help tools
never seen, so it is off by default and the committed weights are
trained without it. --fusion-only FILE --fusion-with all refits a
model's fusion on the dev sets and on the extra sets as registries of
tools it never saw (refused for a set the model was trained on).

--reranker fits the reranker instead of the model: a score over the
fused list's first 50 tools learned from features of each request and
tool (both lists' scores and ranks, BM25 over the name, description and
parameters apart, how much of the request the tool covers, whether its
name's verb and object are in the request, the model's strength on the
tool's text), on the dev and unseen-dev requests only, by LambdaRank
pairs, its penalty chosen by cross-validation with folds by tool. It
writes embeddings/model/rerank.json (used when asked: 'airs eval
retrieval --reranker model'; --reranker-default marks it for the index
to apply unasked). EVALS.md, "a learned reranker", has its figures and
the variants tried (--reranker-trees, --reranker-features,
--reranker-per-request, --reranker-lambda=false, --reranker-train-on).
--reranker-over blend fits one over the blend ('--embedder blend', with
its own features: the parts' cosines and the word-by-word soft match),
--reranker-final over the search's final list (a long request's parts
searched and fused), --reranker-whole-only for requests searched whole
only, --reranker-with adds data files to the fit (EVALS.md, "re-scoring
the blend's first candidates").

--word-map FILE fits, instead of the model, the linear map over the
pretrained word vectors built into airs (GloVe, averaged per text) on the
same training requests, and writes it to FILE (seeded: the same file
each run; defaults --epochs 3 --lr 0.005); embeddings/model/wordmap.bin.gz
is the committed one, written with the defaults. The map and the vectors are the second half of
the blend embedder (selection.embedder: blend; 'airs eval retrieval
--embedder blend[:map=FILE]'); EVALS.md, "pretrained word vectors", has
its figures.

--hub-refs FILE writes, instead of a model, the requests the model is
trained on (the same options choose them), one per line, gzipped:
embeddings/model/hubrefs.txt.gz is the committed one, written with the
defaults. The index lowers each tool's dense score by its closeness to
them (a hubness correction: the tools the model was trained on, and any
tool near many requests, no longer draw requests meant for others);
'airs eval retrieval --embedder blend:hub=W,hubk=K' sets it, hub=0 turns
it off (EVALS.md, "hubness"). --hub-vectors FILE writes those requests'
vectors under the default blend (embeddings/model/hubvecs.bin.gz, so
that no index embeds them at start); rewrite it whenever the model, the
word vectors, the map or the blend's defaults change.

--teacher-texts FILE writes the texts a sentence encoder is distilled on
(the training tools' texts and requests; --extra adds the extra sets'),
one JSON string per line. --pieces FILE distils the encoder into piece
vectors (embeddings.Pieces, the blend's third part) from what
scripts/teacher wrote into --teacher DIR (vocab.jsonl, texts.jsonl):
each piece of the encoder's vocabulary gets the vector that makes a
text's average of its pieces nearest the encoder's vector of the text.
'make pieces' runs the three steps (the encoder runs under Node from its
npm package) and writes embeddings/model/pieces.bin.gz, the committed
one; rewrite --hub-vectors after it. EVALS.md, "distilled sentence
pieces", has the figures.

--from-sessions learns from use instead: the recorded requests of this
installation (default: the session log of airs.yaml) whose tool was
accepted or corrected train a per-installation adapter over the index's
ranking (query words -> tool weights added to the fused score, bounded;
the model itself is not changed). The latest --holdout share of them is
scored first, base ranking against an adapter trained on the earlier
ones; then the adapter trained on all is written to the index directory
($AIRS_HOME/index/adapter.json) and used by every command from its next
start. Run it again as sessions accumulate; delete the file to forget.

Examples:
  airs train retrieval --data-dir ../shared/data
  airs train retrieval --reranker --data-dir ../shared/data
  airs train retrieval --from-sessions
  airs train retrieval --from-sessions sessions.jsonl --holdout 0.3 --implicit
  airs train retrieval --out /tmp/m.bin.gz --epochs 4 && \
    airs eval retrieval --embedder model:/tmp/m.bin.gz --split test --data $DATA_DIR/retrieval/stabletoolbench_queries.jsonl.gz
`,
	Run: runTrain,
}

func runTrain(a *app, args []string) error {
	if len(args) == 0 || args[0] != "retrieval" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			printCommandUsage(a.stdout, a.cmd, nil)
			return nil
		}
		return usagef("say 'airs train retrieval' (the only model trained here)")
	}
	fs := a.flags()
	dataDir := fs.String("data-dir", "", "the reference data `dir` (default $DATA_DIR, else ../shared/data)")
	out := fs.String("out", filepath.Join("embeddings", "model", "tooltext.bin.gz"), "write the model to this `file`")
	seed := fs.Uint64("seed", 1, "seed of the initial table and the example order")
	epochs := fs.Int("epochs", 0, "passes over the training requests (0: the default, 6)")
	lr := fs.Float64("lr", 0, "Adagrad learning rate (0: the default, 0.02)")
	temp := fs.Float64("temperature", 0, "softmax temperature (0: the default, 0.05)")
	perTool := fs.Int("per-tool-cap", 0, "at most this many training requests per gold tool (0: the default, 30)")
	dim := fs.Int("dim", 0, "vector length (0: the default, 128)")
	buckets := fs.Int("buckets", 0, "rows of the hashed feature table (0: the default, 32768)")
	dropout := fs.Float64("dropout", 0, "probability of leaving a tool-text feature out of a training step (0: the default, 0.3; negative: none)")
	views := fs.Bool("tool-views", false, "also train on requests made from each training tool's own text (its description; its name and parameters)")
	mined := fs.Int("mined", 0, "hard negatives per request mined by the model itself after each epoch (0: none)")
	batch := fs.Int("batch", 0, "requests per training step, whose tools are each other's negatives (0: the default, 64)")
	idf := fs.Bool("idf", false, "start each row of the table scaled by its feature's inverse document frequency over the training texts")
	keep := fs.Float64("keep", 0, "share of the trained table kept, the rest the initial projection (weight-space ensembling; 0: all trained)")
	extra := fs.String("extra", "none", "extra training sets from public tool collections, built into airs: all, none, or comma-separated names ("+strings.Join(retrieval.ExtraSets, ", ")+")")
	norm := fs.String("fusion-norm", "", "the score scalings the fusion fit tries: max (default), minmax, or both")
	fusionOnly := fs.String("fusion-only", "", "do not train: refit the fusion weights of this model `file` on the dev data and write it to --out")
	fusionWith := fs.String("fusion-with", "", "with --fusion-only: also fit on these extra sets (all, or comma-separated names), as registries of tools the model never saw; only for a model trained without them")
	asJSON := fs.Bool("json", false, "print the training report as JSON")
	rerank := fs.Bool("reranker", false, "do not train the model: fit the reranker over it (--model) on the dev data and write it to --reranker-out")
	rerankModel := fs.String("model", "", "with --reranker: the model `file` to fit over (default: the committed model)")
	rerankOut := fs.String("reranker-out", filepath.Join("embeddings", "model", "rerank.json"), "with --reranker: write the reranker to this `file`")
	rerankDepth := fs.Int("reranker-depth", 0, "with --reranker: fused candidates re-ranked (0: the default, 50)")
	rerankOn := fs.String("reranker-train-on", "", "with --reranker: fit only on the dev sets whose name contains this `text` (all are scored)")
	rerankLambda := fs.Bool("reranker-lambda", true, "with --reranker: weigh each pair by the NDCG@10 change of swapping it (LambdaRank); false: plain pairs")
	rerankTrees := fs.String("reranker-trees", "", "with --reranker: numbers of boosted trees to try on top of the linear part, comma-separated (default: 0, linear only)")
	rerankL2 := fs.String("reranker-l2", "", "with --reranker: ridge penalties to try, comma-separated (default: 1,10,100)")
	rerankUse := fs.String("reranker-features", "", "with --reranker: the features the fit may weigh, comma-separated (default: all but strength; 'airs help train' lists them)")
	rerankPerRequest := fs.Bool("reranker-per-request", false, "with --reranker: weigh each dev request the same (default: each dev set the same)")
	rerankDefault := fs.Bool("reranker-default", false, "with --reranker: mark the reranker for the index to apply unasked over its model")
	rerankOver := fs.String("reranker-over", "model", "with --reranker: the embedder whose fused list it re-ranks: model (the tool model, --model) or blend (the model with the word vectors, 'airs eval retrieval --embedder blend')")
	rerankFinal := fs.Bool("reranker-final", false, "with --reranker: re-rank the search's final list (a long request's parts searched and fused) instead of the whole request's fused list")
	rerankWhole := fs.Bool("reranker-whole-only", false, "with --reranker-final: fit and apply it only to requests searched whole; a long request searched part by part keeps its fused order")
	rerankWith := fs.String("reranker-with", "", "with --reranker: also fit on these data `files`, comma-separated, as 'airs eval retrieval --data' reads them (e.g. MCP-Bench's dev half; never a final-measurement set)")
	wordMap := fs.String("word-map", "", "do not train the model: fit the pretrained word vectors' linear map on the training requests and write it to this `file` (--epochs, --lr, --seed, --dim apply)")
	hubRefs := fs.String("hub-refs", "", "do not train the model: write the requests it is trained on (the hubness correction's reference requests, embeddings/model/hubrefs.txt.gz) to this `file`")
	teacherTexts := fs.String("teacher-texts", "", "do not train the model: write the texts a sentence encoder is distilled on (training tools' texts and requests) to this `file`, one JSON string per line")
	piecesOut := fs.String("pieces", "", "do not train the model: distil the sentence encoder's vectors in --teacher into piece vectors and write them to this `file` (embeddings/model/pieces.bin.gz)")
	teacherDir := fs.String("teacher", "", "the `folder` scripts/teacher wrote (vocab.jsonl, texts.jsonl), for --pieces")
	pieceLambda := fs.Float64("piece-lambda", embeddings.DefaultPieceLambda, "--pieces: the pull of each piece's vector toward the encoder's vector of the piece alone")
	pieceDim := fs.Int("piece-dim", embeddings.DefaultPieceDim, "--pieces: the vectors' width (the targets' first principal directions; -1: the encoder's own width, uncentred)")
	hubVecs := fs.String("hub-vectors", "", "do not train the model: write the committed reference requests' vectors under the default blend (embeddings/model/hubvecs.bin.gz) to this `file`; needs no data")
	fromSessions := fs.Bool("from-sessions", false, "learn from this installation's recorded sessions (an adapter over the index) instead of training the model")
	holdout := fs.Float64("holdout", 0.2, "with --from-sessions: the latest share of the requests, scored before the adapter is trained on all")
	implicit := fs.Bool("implicit", false, "with --from-sessions: count a call that ran ok without feedback as accepted")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if *fromSessions {
		return trainFromSessions(a, pos, *holdout, *implicit, *asJSON)
	}
	if *piecesOut != "" {
		if *teacherDir == "" {
			return usagef("--pieces needs --teacher DIR (the folder scripts/teacher wrote; 'make pieces' runs it)")
		}
		return trainPieces(a, *teacherDir, *piecesOut, embeddings.PieceTrainOptions{Lambda: *pieceLambda, Dim: *pieceDim})
	}
	if *hubVecs != "" {
		b, err := embeddings.DefaultBlend()
		if err != nil {
			return err
		}
		data, err := embeddings.HubVectors(context.Background(), b)
		if err != nil {
			return err
		}
		if err := atomicfile.Write(*hubVecs, data); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote %s (%d bytes, for %s)\n", *hubVecs, len(data), b.ID())
		return nil
	}
	if len(pos) > 0 {
		return usagef("'train retrieval' takes no arguments (a SESSIONS.jsonl goes with --from-sessions)")
	}
	if *dataDir == "" {
		*dataDir = os.Getenv("DATA_DIR")
	}
	if *dataDir == "" {
		*dataDir = defaultDataDir
	}
	if st, err := os.Stat(*dataDir); err != nil || !st.IsDir() {
		return usagef("no reference data at %q: give --data-dir (the folder with retrieval/, bfcl/, bfcl_multi_turn/) or set DATA_DIR", *dataDir)
	}
	o := retrieval.TrainOptions{DataDir: *dataDir, Progress: a.stderr, PerToolCap: *perTool, ToolViews: *views}
	o.Model.LearningRate, o.Model.Temperature = *lr, *temp
	o.Model.Header.Dim, o.Model.Header.Buckets, o.Model.Dropout = *dim, *buckets, *dropout
	o.Model.Seed, o.Model.Epochs, o.Model.MinedPerQuery, o.Model.Keep = *seed, *epochs, *mined, *keep
	o.Model.IDF, o.Model.Batch = *idf, *batch
	switch *extra {
	case "all":
		o.Extra = retrieval.ExtraSets
	case "none", "":
	default:
		for _, f := range strings.Split(*extra, ",") {
			f = strings.TrimSpace(f)
			if !slices.Contains(retrieval.ExtraSets, f) {
				return usagef("--extra: no set %q (the sets: %s; or all, none)", f, strings.Join(retrieval.ExtraSets, ", "))
			}
			o.Extra = append(o.Extra, f)
		}
	}
	switch *norm {
	case "":
	case "both":
		o.FusionNorms = []string{"max", "minmax"}
	case "max", "minmax":
		o.FusionNorms = []string{*norm}
	default:
		return usagef("--fusion-norm %q: want max, minmax or both", *norm)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *teacherTexts != "" {
		texts, err := retrieval.DistillTexts(ctx, o)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := retrieval.WriteDistillTexts(&b, texts); err != nil {
			return err
		}
		if err := atomicfile.Write(*teacherTexts, b.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote %s (%d texts)\n", *teacherTexts, len(texts))
		return nil
	}
	if *hubRefs != "" {
		refs, err := retrieval.HubRefs(ctx, o)
		if err != nil {
			return err
		}
		if err := writeHubRefs(*hubRefs, refs); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote %s (%d requests)\n", *hubRefs, len(refs))
		return nil
	}
	if *wordMap != "" {
		wo := embeddings.WordMapOptions{Seed: *seed, Epochs: *epochs, LearningRate: *lr, Temperature: *temp, Batch: *batch, Out: *dim}
		if err := retrieval.TrainWordMap(ctx, o, wo, embeddings.WordVectorOptions{}, *wordMap); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "wrote %s\n", *wordMap)
		return nil
	}
	if *rerank {
		ro := retrieval.RerankOptions{Depth: *rerankDepth, PerRequest: *rerankPerRequest, NoLambda: !*rerankLambda, Final: *rerankFinal, WholeOnly: *rerankWhole, Progress: a.stderr}
		for _, f := range strings.Split(*rerankTrees, ",") {
			if f = strings.TrimSpace(f); f != "" {
				n, err := strconv.Atoi(f)
				if err != nil || n < 0 {
					return usagef("--reranker-trees %q: want counts like 0,100", *rerankTrees)
				}
				ro.Trees = append(ro.Trees, n)
			}
		}
		for _, f := range strings.Split(*rerankL2, ",") {
			if f = strings.TrimSpace(f); f != "" {
				v, err := strconv.ParseFloat(f, 64)
				if err != nil || v <= 0 {
					return usagef("--reranker-l2 %q: want positive numbers like 1,10", *rerankL2)
				}
				ro.L2s = append(ro.L2s, v)
			}
		}
		if *rerankUse != "" {
			for _, f := range strings.Split(*rerankUse, ",") {
				f = strings.TrimSpace(f)
				if !slices.Contains(embeddings.RerankFeatures, f) {
					return usagef("--reranker-features: no feature %q (the features: %s)", f, strings.Join(embeddings.RerankFeatures, ", "))
				}
				ro.Use = append(ro.Use, f)
			}
		}
		if *rerankOn != "" {
			on := *rerankOn
			ro.TrainOn = func(set string) bool { return strings.Contains(set, on) }
		}
		if *rerankOver != "model" && *rerankOver != "blend" {
			return usagef("--reranker-over %q: want model or blend", *rerankOver)
		}
		var with []string
		for _, f := range strings.Split(*rerankWith, ",") {
			if f = strings.TrimSpace(f); f != "" {
				with = append(with, f)
			}
		}
		return trainReranker(ctx, a, *dataDir, *rerankModel, *rerankOver, with, *rerankOut, ro, *rerankDefault, *asJSON)
	}
	var m *embeddings.ToolModel
	var rep retrieval.TrainReport
	if *fusionOnly != "" {
		if m, err = embeddings.LoadToolModel(*fusionOnly); err != nil {
			return err
		}
		var with []retrieval.Dataset
		if *fusionWith != "" {
			names := strings.Split(*fusionWith, ",")
			if *fusionWith == "all" {
				names = retrieval.ExtraSets
			}
			trained, _ := m.Header().Train["extra"].([]any)
			for _, n := range names {
				n = strings.TrimSpace(n)
				for _, t := range trained {
					if t == n {
						return usagef("--fusion-with %s: the model was trained on it; fit only on sets it never saw", n)
					}
				}
				ds, err := retrieval.LoadExtra(n)
				if err != nil {
					return usagef("--fusion-with: %v", err)
				}
				with = append(with, ds)
			}
		}
		dev, err := retrieval.DevSets(*dataDir)
		if err != nil {
			return err
		}
		dev = append(dev, with...)
		if rep.Fusion, rep.DevNDCG, err = retrieval.FitFusion(ctx, m, dev, o.FusionNorms, a.stderr); err != nil {
			return err
		}
		m.SetFusion(rep.Fusion)
		h := m.Header()
		if h.Train != nil {
			h.Train["dev_ndcg10"] = rep.DevNDCG
		}
	} else if m, rep, err = retrieval.Train(ctx, o); err != nil {
		return err
	}
	tmp := *out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	if *asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintf(a.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(a.stdout, "wrote %s (%s): fusion %+v, dev NDCG@10 %.4f\n", *out, m.ID(), rep.Fusion, rep.DevNDCG)
	}
	return nil
}

// trainFromSessions learns the installation's adapter from its recorded
// sessions and writes it beside the index.
func trainFromSessions(a *app, pos []string, holdout float64, implicit, asJSON bool) error {
	if len(pos) > 1 {
		return usagef("'train retrieval --from-sessions' takes one SESSIONS.jsonl (default: the recorded sessions of airs.yaml)")
	}
	if holdout < 0 || holdout >= 1 {
		return usagef("--holdout %v: want a share from 0 (score nothing) to below 1", holdout)
	}
	arg := ""
	if len(pos) == 1 {
		arg = pos[0]
	}
	items, unlabelled, name, err := a.recordedItems(arg, implicit)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(a.context(), os.Interrupt)
	defer stop()
	e, closeE, err := a.build(ctx, engineSpec{Channel: "train", Model: "none"})
	if err != nil {
		return err
	}
	defer closeE()
	callable := map[string][]string{}
	var exs []embeddings.AdapterExample
	skipped := 0
	for _, it := range items {
		if it.Gold == nil {
			skipped++ // "no tool was right": nothing for a ranking to learn
			continue
		}
		names, ok := callable[it.Caller]
		if !ok {
			for _, en := range e.CallableTools(it.Caller) {
				names = append(names, en.Tool.Name)
			}
			callable[it.Caller] = names
		}
		if !slices.Contains(names, it.Gold.Tool) {
			skipped++ // the tool is gone, or the caller may no longer call it
			continue
		}
		exs = append(exs, embeddings.AdapterExample{Query: it.Request, Tool: it.Gold.Tool, Allowed: names})
	}
	if len(exs) == 0 {
		return usagef("%s has no request labelled with a tool this installation still offers (%d labelled, %d unlabelled)\n"+
			"hint: /accept or /correct what 'airs chat' chose, or pass --implicit to count calls that ran ok", name, len(items), unlabelled)
	}
	ad, rep, err := retrieval.LearnFromUse(ctx, e.ToolIndex(), exs, holdout, embeddings.AdapterOptions{})
	if err != nil {
		return err
	}
	if err := e.ToolIndex().SaveAdapter(ad); err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(struct {
			retrieval.UseReport
			Skipped int    `json:"skipped"`
			Written string `json:"written"`
		}{rep, skipped, filepath.Join(a.cfg.IndexDir(), embeddings.AdapterFile)})
		fmt.Fprintf(a.stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(a.stdout, "%s: %d requests to learn from (%d skipped: no tool, or a tool no longer offered; %d unlabelled)\n", name, len(exs), skipped, unlabelled)
	if rep.HeldOut > 0 {
		fmt.Fprintf(a.stdout, "held out, the latest %d: top-1 %.3f -> %.3f, recall@5 %.3f -> %.3f (base -> adapter trained on the %d before)\n",
			rep.HeldOut, rep.Base.Top1, rep.Adapted.Top1, rep.Base.RecallAt5, rep.Adapted.RecallAt5, rep.Train)
	}
	fmt.Fprintf(a.stdout, "wrote %s (%d words, %d weights), trained on all %d: used from each command's next start\n",
		filepath.Join(a.cfg.IndexDir(), embeddings.AdapterFile), rep.Terms, rep.Weights, len(exs))
	return nil
}

// trainReranker fits the reranker over a model on the dev data and writes
// it (JSON) to out.
func trainReranker(ctx context.Context, a *app, dataDir, modelFile, over string, with []string, out string, o retrieval.RerankOptions, isDefault, asJSON bool) error {
	var m *embeddings.ToolModel
	var err error
	if modelFile == "" {
		m, err = embeddings.DefaultModel()
	} else {
		m, err = embeddings.LoadToolModel(modelFile)
	}
	if err != nil {
		return err
	}
	var emb embeddings.Embedder = m
	if over == "blend" {
		if emb, err = embeddings.NewBlend(m, embeddings.BlendOptions{}); err != nil {
			return err
		}
	}
	dev, err := retrieval.DevSets(dataDir)
	if err != nil {
		return err
	}
	if len(with) > 0 {
		more, err := retrieval.Load(with)
		if err != nil {
			return usagef("--reranker-with: %v", err)
		}
		dev = append(dev, more...)
	}
	if o.Known, err = retrieval.TrainingToolKeys(dataDir); err != nil {
		return err
	}
	r, rep, err := retrieval.FitReranker(ctx, emb, dev, o)
	if err != nil {
		return err
	}
	r.Default = isDefault
	b, err := r.Marshal()
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	if asJSON {
		b, _ := json.Marshal(rep)
		fmt.Fprintf(a.stdout, "%s\n", b)
		return nil
	}
	fmt.Fprintf(a.stdout, "wrote %s (over %s): L2 %g, cross-validated dev NDCG@10 %.4f (fused list %.4f)\n", out, emb.ID(), rep.L2, rep.CVMean, rep.FusedAvg)
	return nil
}

// writeHubRefs writes the reference requests to path, whole or not at all.
func writeHubRefs(path string, refs []string) error {
	var b bytes.Buffer
	if err := embeddings.WriteHubRefs(&b, refs); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes())
}

func trainPieces(a *app, dir, out string, o embeddings.PieceTrainOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	t, err := retrieval.ReadTeacher(dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stderr, "distilling %d pieces from %d texts\n", len(t.Pieces), len(t.Texts))
	o.Progress = func(it int, res float64) { fmt.Fprintf(a.stderr, "  step %d: residual %.2g\n", it, res) }
	var b bytes.Buffer
	if err := embeddings.TrainPieces(ctx, t, &b, o); err != nil {
		return err
	}
	if err := atomicfile.Write(out, b.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "wrote %s (%d bytes)\n", out, b.Len())
	return nil
}
