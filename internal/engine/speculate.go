package engine

import (
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/speculation"
)

// startSpeculator wires the speculator when guard.speculation is on:
// after the recommender has seen each call (its AfterCall), or on its own
// subscription when suggestions are off.
func (e *Engine) startSpeculator() {
	sc := e.cfg.Guard.Speculation
	if !sc.Enabled || !e.manager.SpeculationConfig().Enabled {
		return
	}
	// Its own tracker, fed in order by the events it predicts from: the
	// engine's (affinity.go) follows another subscription and may not have
	// counted the call the speculator is looking at yet.
	sp := speculation.New(e.manager, e.recommender, nil, sc.Top)
	e.speculator.Store(sp)
	if e.recommender != nil { // recommend.go's AfterCall forwards to it
		e.stopSpeculator = sp.Close // after the recommender stopped calling it
		return
	}
	sub := e.manager.Subscribe(256)
	done := make(chan struct{})
	go func() { defer close(done); sp.Run(sub) }()
	e.stopSpeculator = func() {
		sp.Close()
		<-done
		sub.Close()
	}
}

// afterCall is the recommender's AfterCall: the speculator's turn (nil
// until startSpeculator ran, or when speculation is off).
func (e *Engine) afterCall(ev pipeline.CallEvent) {
	if sp := e.speculator.Load(); sp != nil {
		sp.After(ev)
	}
}

// Speculator is the engine's speculation predictor; nil when
// guard.speculation is off.
func (e *Engine) Speculator() *speculation.Speculator { return e.speculator.Load() }
