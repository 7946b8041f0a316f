package retrieval

import (
	"context"
	"errors"

	"github.com/airs-dev/airs/embeddings"
)

// UseReport is what learning from use did: the held-out requests (the
// latest ones: trained on the past, scored on what came after) ranked by
// the base alone and with the adapter trained on the others, and the
// adapter finally written, trained on every request.
type UseReport struct {
	Train   int                     `json:"train"`
	HeldOut int                     `json:"held_out"`
	Base    embeddings.AdapterScore `json:"base"`
	Adapted embeddings.AdapterScore `json:"adapted"`
	// Terms and Weights measure the adapter written.
	Terms   int `json:"terms"`
	Weights int `json:"weights"`
}

// LearnFromUse trains ix's per-installation adapter on labelled requests
// in log order: the last holdout fraction scores an adapter trained on the
// rest against the base, then the adapter returned is trained on all of
// them (holdout 0: no score).
func LearnFromUse(ctx context.Context, ix *embeddings.Index, exs []embeddings.AdapterExample, holdout float64, o embeddings.AdapterOptions) (*embeddings.Adapter, UseReport, error) {
	var rep UseReport
	if len(exs) == 0 {
		return nil, rep, errors.New("no labelled request names a tool the index holds: nothing to learn from")
	}
	cut := len(exs) - int(float64(len(exs))*holdout)
	if holdout > 0 && cut < len(exs) && cut > 0 {
		train, test := exs[:cut], exs[cut:]
		rep.Train, rep.HeldOut = len(train), len(test)
		a, err := embeddings.TrainAdapter(ctx, ix, train, o)
		if err != nil {
			return nil, rep, err
		}
		if rep.Base, err = embeddings.ScoreAdapter(ctx, ix, nil, test); err != nil {
			return nil, rep, err
		}
		if rep.Adapted, err = embeddings.ScoreAdapter(ctx, ix, a, test); err != nil {
			return nil, rep, err
		}
	} else {
		rep.Train = len(exs)
	}
	a, err := embeddings.TrainAdapter(ctx, ix, exs, o)
	if err != nil {
		return nil, rep, err
	}
	rep.Terms = len(a.Weights)
	for _, w := range a.Weights {
		rep.Weights += len(w)
	}
	return a, rep, nil
}
