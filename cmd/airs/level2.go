package main

import (
	"log/slog"
	"math"
	"sync"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// level2 builds the pipeline's level-2 check from airs.yaml's level2 and
// agents.NAME.purpose; nil when level2.enabled is false.
func level2(c *config.Config, log *slog.Logger) *pipeline.Level2 {
	if !c.Level2.Enabled {
		return nil
	}
	return pipeline.NewLevel2(level2Options(c), log)
}

func level2Options(c *config.Config) pipeline.Level2Options {
	l := c.Level2
	o := pipeline.Level2Options{TrustedSpaces: l.TrustedSpaces, TrustedMCP: l.TrustedMCP, SendTools: l.SendTools,
		Unsure: l.Unsure, PurposeThreshold: l.PurposeThreshold, Purposes: c.Purposes(),
		Asks: requestAsks, Similarity: retrievalSimilarity()}
	if l.SendTools != nil {
		o.SendTools = append(o.SendTools, pipeline.DefaultSendTools...)
	}
	for _, f := range l.Flows {
		r := pipeline.FlowRule{Name: f.Name, From: f.From, Args: f.Args, Action: f.Action, SameSpace: f.SameSpace}
		for _, t := range f.To {
			r.To = append(r.To, pipeline.ToolClass(t))
		}
		o.Flows = append(o.Flows, r)
	}
	return o
}

// requestAsks reads a request's actions with package understand.
func requestAsks(text string) pipeline.Asked {
	in := understand.Parse(text, understand.Env{})
	a := pipeline.Asked{Destructive: in.ExplicitDestructive}
	for _, x := range in.Actions {
		a.Actions = append(a.Actions, string(x))
	}
	return a
}

// retrievalSimilarity is the cosine of the committed retrieval model's
// vectors of two texts; nil (the signal left out) when the model cannot
// be read.
func retrievalSimilarity() func(a, b string) float64 {
	var once sync.Once
	var m *embeddings.ToolModel
	return func(a, b string) float64 {
		once.Do(func() { m, _ = embeddings.DefaultModel() })
		if m == nil {
			return 1 // no model: no mismatch is claimed
		}
		return cosine(m.Encode(a), m.Encode(b))
	}
}

func cosine(x, y []float32) float64 {
	var dot, nx, ny float64
	for i := range min(len(x), len(y)) {
		dot += float64(x[i]) * float64(y[i])
		nx += float64(x[i]) * float64(x[i])
		ny += float64(y[i]) * float64(y[i])
	}
	if nx == 0 || ny == 0 {
		return 0
	}
	return dot / math.Sqrt(nx*ny)
}
