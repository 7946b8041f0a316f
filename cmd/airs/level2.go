package main

import (
	"log/slog"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
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
		Asks: selector.RequestAsks, Similarity: embeddings.ModelSimilarity()}
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
