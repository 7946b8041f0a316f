package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/guard/affinity"
	"github.com/airs-dev/airs/internal/filelock"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

// Tool affinity (guard.affinity): the engine counts every
// delivered call per (caller, tool) in a guard/affinity Tracker, keeps what
// it learned in AIRS_HOME/guard/affinity.json, and acts on it:
//
//   - pre-warm at start (chat, serve): the providers of the tools the
//     saved affinities name (pipeline.Registry.Warm, for handlers with a
//     start cost) and the selector's Ollama model (ollama.Load), so that
//     the first request of a caller with affinity does not pay the load;
//   - keep-alive while affinities are active: the selector's model
//     requests carry guard.affinity.keep_alive, and the long-lived
//     channels warm again every keep_alive/2, so Ollama never unloads the
//     model (its default is 5 minutes idle) while someone uses AIRS often;
//   - a hot cache of the tool lookups (Catalog.Tool) of the pairs with an
//     affinity, invalidated by any registry change (affinity.HotCache).
//
// One-shot channels (run, select, recommend) count and save but do not
// warm: they would pay the warm-up themselves, or exit before it is done.

// affinitySaveEvery is how often a running engine saves new affinity
// counts (Close saves the rest).
const affinitySaveEvery = 30 * time.Second

// keepAliveEvery is how often the long-lived channels warm the active
// affinities again: half the keep_alive, so the model is reloaded (a no-op
// when loaded) before Ollama would unload it. A variable for tests.
var keepAliveEvery = func(keep time.Duration) time.Duration { return keep / 2 }

// affinityState is the engine's affinity: the tracker, its file and the
// goroutines that feed, save and warm.
type affinityState struct {
	e     *Engine
	keep  time.Duration
	tr    *affinity.Tracker
	cache *affinity.HotCache
	path  string // "" without AIRS_HOME

	saveMu sync.Mutex // one save at a time
	saved  uint64     // tracker version last saved

	mu     sync.Mutex
	notice string // a corrupt file set aside
	err    error  // the last background error, reported by Close
	warm   Prewarmed

	closeOnce sync.Once
	stopWarm  context.CancelFunc
	sub       *pipeline.Subscription
	warms     [2]atomic.Uint64 // warm-up rounds: [0] ok, [1] failed
	runDone   chan struct{}
	loopDone  chan struct{}
	warmDone  chan struct{}
}

// Prewarmed says what the start-up pre-warm did.
type Prewarmed struct {
	Affinities int           // loaded affinities it warmed for
	Handlers   int           // tool handlers warmed (pipeline.Warmer)
	Model      string        // the Ollama model loaded, "" if none
	Took       time.Duration // the whole pre-warm
	Err        error
}

// longLived are the channels that pre-warm and keep alive.
func longLived(channel string) bool { return channel == "chat" || channel == "serve" }

// startAffinity builds the tracker, seeds it from AIRS_HOME, follows the
// Manager's call events and, in long-lived channels, pre-warms in the
// background and keeps the active affinities warm. It never fails the
// start: an unreadable file is set aside and said (AffinityNotice).
func (e *Engine) startAffinity() {
	ac := e.cfg.Guard.Affinity
	if !ac.Enabled {
		return
	}
	s := &affinityState{e: e, keep: ac.KeepAlive,
		tr: affinity.New(affinity.Config{Window: ac.Window, Threshold: ac.Threshold})}
	s.cache = affinity.NewHotCache(e.catalog, s.tr.Hot)
	var seeded []affinity.Affinity
	if e.cfg.Home != "" {
		s.path = e.cfg.AffinityFile()
		seeded = s.tr.Seed(s.load())
		s.saved = s.tr.Version()
	}
	sub := e.manager.Subscribe(1024)
	s.sub = sub
	s.runDone, s.loopDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.runDone)
		// No context: it ends when Close closes the subscription, after
		// the events still buffered are counted.
		s.tr.Run(context.Background(), sub)
	}()
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWarm = cancel
	warm := longLived(e.channel)
	go s.loop(ctx, warm)
	if warm && len(seeded) > 0 {
		s.warmDone = make(chan struct{})
		go func() {
			defer close(s.warmDone)
			s.prewarm(ctx, seeded)
		}()
	}
	e.affinity = s
}

// load reads the saved affinities under the file's lock. A corrupt file
// is moved aside (nothing is lost) and the engine starts with none.
func (s *affinityState) load() []affinity.Affinity {
	unusable := func(err error) []affinity.Affinity {
		s.notice = fmt.Sprintf("affinity: %v: fix the folder's permissions; affinities are not saved this run", err)
		s.path = ""
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return unusable(err)
	}
	unlock, err := filelock.LockPath(s.path + ".lock")
	if err != nil {
		return unusable(err)
	}
	defer unlock()
	as, err := affinity.Load(s.path)
	var ce *affinity.CorruptError
	switch {
	case errors.As(err, &ce):
		to, serr := affinity.SetAside(s.path, time.Now())
		if serr != nil {
			s.notice = fmt.Sprintf("%v; it could not be moved aside (%v): move or delete it, affinities are not saved until then", err, serr)
			s.path = "" // never overwrite it
			return nil
		}
		s.notice = fmt.Sprintf("%v: moved to %s; starting with no affinities", err, to)
	case err != nil:
		return unusable(err)
	}
	return as
}

func (s *affinityState) fail(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
}

// save merges the tracker's affinities into the file, under its lock;
// nothing new since the last save: nothing written.
func (s *affinityState) save() error {
	if s.path == "" {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	v := s.tr.Version()
	if v == s.saved {
		return nil
	}
	unlock, err := filelock.LockPath(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("affinity: %w", err)
	}
	defer unlock()
	disk, err := affinity.Load(s.path)
	var ce *affinity.CorruptError
	if errors.As(err, &ce) {
		// Written by something else since we loaded: keep it, save ours.
		if _, serr := affinity.SetAside(s.path, time.Now()); serr != nil {
			return fmt.Errorf("%w (and it could not be moved aside: %v)", err, serr)
		}
		disk, err = nil, nil
	}
	if err != nil {
		return err
	}
	if err := s.tr.Save(s.path, disk); err != nil {
		return err
	}
	s.saved = v
	return nil
}

// loop saves every affinitySaveEvery and, when warm, keeps the active
// affinities warm every keep_alive/2.
func (s *affinityState) loop(ctx context.Context, warm bool) {
	defer close(s.loopDone)
	save := time.NewTicker(affinitySaveEvery)
	defer save.Stop()
	var keep <-chan time.Time
	if warm {
		k := time.NewTicker(keepAliveEvery(s.keep))
		defer k.Stop()
		keep = k.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-save.C:
			if err := s.save(); err != nil {
				s.fail(err)
			}
		case <-keep:
			if as := s.tr.Affinities(); len(as) > 0 {
				if _, _, err := s.warmUp(ctx, as); err != nil && ctx.Err() == nil {
					s.fail(err)
				}
			}
		}
	}
}

// warmUp warms the providers of as's tools and the selector's model.
func (s *affinityState) warmUp(ctx context.Context, as []affinity.Affinity) (handlers int, model string, err error) {
	defer func() {
		if err != nil {
			s.warms[1].Add(1)
		} else {
			s.warms[0].Add(1)
		}
	}()
	handlers, err = affinity.Prewarm(ctx, s.e.registry, as)
	if s.e.model != nil && s.e.modelName != "" {
		// The selector's num_ctx: a model loaded with another would be
		// loaded again by the first selection.
		warm := selector.ModelRequest{Model: s.e.modelName, NumCtx: s.e.sel.Config.WithDefaults().NumCtx, KeepAlive: s.keep}
		if merr := s.e.model.Generate(ctx, warm, nil); merr != nil {
			err = errors.Join(err, merr)
		} else {
			model = s.e.modelName
		}
	}
	return handlers, model, err
}

func (s *affinityState) prewarm(ctx context.Context, as []affinity.Affinity) {
	start := time.Now()
	n, model, err := s.warmUp(ctx, as)
	s.mu.Lock()
	s.warm = Prewarmed{Affinities: len(as), Handlers: n, Model: model, Took: time.Since(start), Err: err}
	s.mu.Unlock()
}

// close stops the goroutines, counts the buffered events and saves.
func (s *affinityState) close() error {
	s.stopWarm()
	if s.warmDone != nil {
		<-s.warmDone
	}
	<-s.loopDone
	s.sub.Close()
	<-s.runDone
	err := s.save()
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(err, s.err)
}

// stopAffinity is Close's part (once: Close may be called again).
func (e *Engine) stopAffinity() error {
	if e.affinity == nil {
		return nil
	}
	var err error
	e.affinity.closeOnce.Do(func() { err = e.affinity.close() })
	return err
}

// AffinityNotice is what the user should know about the affinity state
// (a corrupt file set aside); "" when nothing.
func (e *Engine) AffinityNotice() string {
	if e.affinity == nil {
		return ""
	}
	return e.affinity.notice
}

// Affinities are the (caller, tool) pairs with an affinity now.
func (e *Engine) Affinities() []affinity.Affinity {
	if e.affinity == nil {
		return nil
	}
	return e.affinity.tr.Affinities()
}

// WaitPrewarm waits for the start-up pre-warm (if one runs) and says what
// it did.
func (e *Engine) WaitPrewarm(ctx context.Context) (Prewarmed, error) {
	s := e.affinity
	if s == nil || s.warmDone == nil {
		return Prewarmed{}, nil
	}
	select {
	case <-s.warmDone:
	case <-ctx.Done():
		return Prewarmed{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warm, nil
}

// modelKeepAlive is the keep_alive of the selector's model requests:
// guard.affinity.keep_alive while some affinity is active, else the
// server's default.
func (e *Engine) modelKeepAlive() time.Duration {
	if s := e.affinity; s != nil && len(s.tr.Affinities()) > 0 {
		return s.keep
	}
	return 0
}

// selectorModel is the selector's model, with the affinity keep-alive
// (nil in no-LLM mode).
func (e *Engine) selectorModel() selector.Model {
	if e.local != nil {
		return e.local
	}
	if e.model == nil || e.answersOnly {
		return nil
	}
	return keepAliveModel{Model: e.model, keepAlive: e.modelKeepAlive}
}

// toolCatalog is the catalog chains and CallableTool look tools up in: the
// hot cache over Catalog when affinity is on.
func (e *Engine) toolCatalog() chains.Catalog {
	if e.affinity != nil {
		return e.affinity.cache
	}
	return e.catalog
}

// writeAffinityMetrics writes the affinity's Prometheus text (nothing when
// it is off).
func (e *Engine) writeAffinityMetrics(w io.Writer) error {
	s := e.affinity
	if s == nil {
		return nil
	}
	hits, misses, _ := s.cache.Stats()
	_, err := fmt.Fprintf(w, `# HELP airs_affinities (caller, tool) pairs with an affinity now.
# TYPE airs_affinities gauge
airs_affinities %d
# HELP airs_affinity_lookups_total Tool lookups of pairs with an affinity, by whether the hot cache answered.
# TYPE airs_affinity_lookups_total counter
airs_affinity_lookups_total{result="hit"} %d
airs_affinity_lookups_total{result="miss"} %d
# HELP airs_affinity_warms_total Warm-up rounds (providers and model), at start and keep-alive.
# TYPE airs_affinity_warms_total counter
airs_affinity_warms_total{result="ok"} %d
airs_affinity_warms_total{result="failed"} %d
# HELP airs_affinity_events_dropped_total Call events the affinity tracker missed (its buffer was full).
# TYPE airs_affinity_events_dropped_total counter
airs_affinity_events_dropped_total %d
`, len(s.tr.Affinities()), hits, misses, s.warms[0].Load(), s.warms[1].Load(), s.sub.Dropped())
	return err
}
