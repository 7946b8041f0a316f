package httpapi

import (
	"context"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/server"
)

// recBackend is the engine's Backend when suggestions are on.
type recBackend struct{ backend }

var _ server.RecommendBackend = recBackend{}

func (b recBackend) Recommendations(caller string) []recommender.Recommendation {
	return b.e.Recommender().List(caller)
}

func (b recBackend) SubscribeRecommendations(caller string) (<-chan recommender.Update, func()) {
	return b.e.Recommender().Subscribe(caller)
}

// AcceptRecommendation runs an accepted suggestion through the pipeline as
// the caller when no provider of the tool is destructive, as /v1/chat
// runs calls; a tool that is not is handed back for the client to confirm.
func (b recBackend) AcceptRecommendation(ctx context.Context, caller, id string) (*recommender.Recommendation, *pipeline.Result, error, error) {
	rec, err := b.e.Recommender().Accept(caller, id)
	if err != nil {
		return nil, nil, nil, err
	}
	tool, confirm := b.e.Lookup(caller, rec.Tool, rec.Provider)
	if tool == nil {
		return rec, nil, &pipeline.ToolNotFound{Tool: rec.Tool}, nil
	}
	if confirm {
		return rec, nil, nil, nil
	}
	res, callErr := b.e.Call(ctx, pipeline.Request{Tool: rec.Tool, Provider: rec.Provider, Params: rec.Arguments, Caller: caller})
	return rec, res, callErr, nil
}

func (b recBackend) DismissRecommendation(caller, id string) error {
	return b.e.Recommender().Dismiss(caller, id)
}

func (b recBackend) SetContext(ctx context.Context, caller string, c server.ContextUpdate) error {
	r := b.e.Recommender()
	r.Known(caller)
	for _, f := range c.Files {
		if err := b.e.TouchFile(caller, f.Space, f.Path); err != nil {
			return err
		}
	}
	if c.Task != nil {
		if err := r.SetTask(caller, *c.Task); err != nil {
			return err
		}
	}
	if c.Turn != "" {
		r.ObserveTurn(caller, c.Turn)
	}
	return nil
}
