package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/evals/retrieval"
)

var trainCmd = &command{
	Name:    "train",
	Summary: "train the tool-retrieval model on the public reference data",
	Usage: `Usage:
  airs train retrieval [--data-dir DIR] [--out FILE] [--seed N] [--epochs N] [--json]

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

Examples:
  airs train retrieval --data-dir ../shared/data
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
	fusionOnly := fs.String("fusion-only", "", "do not train: refit the fusion weights of this model `file` on the dev data and write it to --out")
	asJSON := fs.Bool("json", false, "print the training report as JSON")
	if _, err := parseArgs(fs, args[1:]); err != nil {
		return err
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
	o := retrieval.TrainOptions{DataDir: *dataDir, Progress: a.stderr, PerToolCap: *perTool}
	o.Model.LearningRate, o.Model.Temperature = *lr, *temp
	o.Model.Header.Dim, o.Model.Header.Buckets, o.Model.Dropout = *dim, *buckets, *dropout
	o.Model.Seed, o.Model.Epochs = *seed, *epochs
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var m *embeddings.ToolModel
	var rep retrieval.TrainReport
	var err error
	if *fusionOnly != "" {
		if m, err = embeddings.LoadToolModel(*fusionOnly); err != nil {
			return err
		}
		dev, err := retrieval.DevSets(*dataDir)
		if err != nil {
			return err
		}
		if rep.Fusion, rep.DevNDCG, err = retrieval.FitFusion(ctx, m, dev, a.stderr); err != nil {
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
