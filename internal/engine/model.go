package engine

import (
	"context"
	"time"

	"github.com/airs-dev/airs/selector"
)

// keepAliveModel sets every request's KeepAlive from the engine's affinity
// (so a model in use stays loaded).
type keepAliveModel struct {
	selector.Model
	keepAlive func() time.Duration
}

func (m keepAliveModel) Generate(ctx context.Context, req selector.ModelRequest, onChunk func(string) error) error {
	req.KeepAlive = m.keepAlive()
	return m.Model.Generate(ctx, req, onChunk)
}
