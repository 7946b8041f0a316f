package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/store/pg"
)

// AnomalyGate is the anomaly gate of one airs process: the scorer the
// Manager runs (pipeline.Config.Scorer), the models it scores with, and
// the watcher that swaps them when their files change (or on SIGHUP, in a
// server) — no restart. With no model file the gate is off ("reduced
// mode": calls are not scored, Notice says why and what to run) until a
// model appears.
type AnomalyGate struct {
	Scorer     pipeline.CallScorer
	Models     *anomaly.Holder
	Thresholds pipeline.AnomalyThresholds
	// Notice is "" with a model loaded, else why the gate is off (or,
	// with a broken file, why it is not the file's model that scores).
	Notice string
	// NoModel: the model file does not exist (the reduced mode,
	// NoAnomalyModel).
	NoModel bool

	cfg     config.Anomaly
	scorer  *guard.AnomalyScorer
	audit   string    // the audit log file the scheduled update reads ("" on PostgreSQL)
	models  *pgModels // storage.guard: postgres (pgstate.go); nil: the model files
	ownDB   *pg.DB    // the database models was opened on, when the gate opened it
	log     *slog.Logger
	mu      sync.Mutex // Reload
	stamps  [2]fileStamp
	stop    chan struct{}
	stopped sync.WaitGroup
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// AnomalyHistory is how many of the audit log's last records warm a new
// process's per-caller history.
const AnomalyHistory = 20000

// AnomalyWatchInterval is how often the model files are checked (a
// variable for tests).
var AnomalyWatchInterval = 2 * time.Second

// NoAnomalyModel is the reduced mode's name, in notices and the log.
const NoAnomalyModel = "anomaly gate off (no model)"

// StartAnomaly loads the configured models, warms the history from the
// audit log and, when watch is set (long-running processes), follows the
// model files and SIGHUP. log gets the swaps and, at the warn threshold,
// one line per anomalous call; nil discards.
func StartAnomaly(cfg *config.Config, log *slog.Logger, watch bool) *AnomalyGate {
	return StartAnomalyOn(cfg, nil, log, watch)
}

// StartAnomalyOn is StartAnomaly on the process's database db (nil: it
// opens its own when airs.yaml puts the audit log or the guard there):
// with storage.guard: postgres the models come from the database's slots
// (pgModels), polled for a new version every AnomalyWatchInterval.
func StartAnomalyOn(cfg *config.Config, db *pg.DB, log *slog.Logger, watch bool) *AnomalyGate {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := cfg.Guard.Anomaly
	g := &AnomalyGate{Models: &anomaly.Holder{}, cfg: a, log: log,
		Thresholds: pipeline.AnomalyThresholdsOf(a.Warn, a.Review, a.Block)}
	if guardOnPG(cfg) {
		g.models, g.ownDB = openPGModels(cfg, db)
	}
	sc := guard.NewAnomalyScorer(g.Models, g.Thresholds.Block)
	g.scorer = sc
	g.Scorer = &warningScorer{inner: sc, at: g.Thresholds.Warn, log: log}
	if err := g.Reload(); err != nil {
		g.Notice = err.Error()
		g.NoModel = errors.Is(err, fs.ErrNotExist)
	}
	// The history matters only once a model scores: a one-shot command
	// with no model skips reading the audit log's tail.
	if (!g.NoModel || watch) && auditOnPG(cfg) {
		recs, err := pgAuditTailOn(cfg, db, AnomalyHistory)
		sc.WarmHistoryFrom(recs, pipeline.AnomalyScoreOf(sc.Block))
		if err != nil {
			log.Warn("anomaly: the PostgreSQL audit log's tail could not warm the history; tools already called may count as new for a while", "err", err)
		}
	} else if !g.NoModel || watch {
		if _, err := sc.WarmHistory(cfg.AuditPath(), AnomalyHistory, pipeline.AnomalyScoreOf(sc.Block)); err != nil {
			log.Warn("anomaly: the audit log's tail could not warm the history; tools already called may count as new for a while", "err", err)
		}
	}
	if !auditOnPG(cfg) {
		g.audit = cfg.AuditPath()
	}
	if watch {
		g.stop = make(chan struct{})
		g.stopped.Add(2)
		go g.watch()
		go g.updateEvery(AnomalyUpdateInterval)
	}
	return g
}

// AnomalyUpdateInterval is how often a long-running airs updates the
// model file with the audit log's calls since the model's newest
// (anomaly.Model.Update: counting, not retraining from scratch), so the
// gate keeps learning without `airs guard train` being run by hand. A
// variable for tests.
var AnomalyUpdateInterval = time.Hour

// updateEvery runs UpdateModel every interval until Close.
func (g *AnomalyGate) updateEvery(interval time.Duration) {
	defer g.stopped.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			if n, err := g.UpdateModel(); err != nil {
				g.log.Warn("anomaly: scheduled model update", "err", err)
			} else if n > 0 {
				g.log.Info("anomaly: model updated", "calls", n, "file", g.cfg.Model)
			}
		}
	}
}

// UpdateModel learns the audit log's calls newer than the model's newest
// into the model file (the watcher then loads it). It does nothing
// without a model file (a person trains the first one) or with the
// models or the audit log in PostgreSQL (`airs guard train` updates
// those). It returns how many calls were learned.
func (g *AnomalyGate) UpdateModel() (int, error) {
	if g.models != nil || g.audit == "" || g.cfg.Model == "" {
		return 0, nil
	}
	cur, err := anomaly.Load(g.cfg.Model)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	ts, err := guard.ReadTrainingSet(g.audit, pipeline.AnomalyScoreOf(g.Thresholds.Block))
	if err != nil {
		return 0, err
	}
	calls := ts.After(cur.Through())
	if len(calls) == 0 {
		return 0, nil
	}
	next, err := cur.Update(calls)
	if err != nil {
		return 0, err
	}
	return len(calls), next.Save(g.cfg.Model)
}

// Learning is inner (the guard) with what a person decides taught to the
// scorer: a call the anomaly gate held that a person approved (once or
// always) makes its tool and folders usual for its caller at once, in
// this process, before any retraining; a denied one teaches nothing and
// stays unusual.
func (g *AnomalyGate) Learning(inner pipeline.IntentGate) pipeline.IntentGate {
	return &learningGate{inner: inner, scorer: g.scorer}
}

type learningGate struct {
	inner  pipeline.IntentGate
	scorer *guard.AnomalyScorer
}

func (l *learningGate) Gate(ctx context.Context, c pipeline.IntentCheck) (pipeline.IntentDecision, error) {
	d, err := l.inner.Gate(ctx, c)
	if err == nil && c.Anomaly == pipeline.AnomalyBlock &&
		(d.Decision == pipeline.IntentApproved || d.Decision == pipeline.IntentAlways) {
		l.scorer.Learn(c.Caller, c.Tool.Name, c.Params)
	}
	return d, err
}

// Reload reads the model files again and installs what they hold (the
// candidate, when configured, beside the main model). A missing main model
// turns the gate off (the error says so and how to make one); a broken
// file leaves the current model in place.
func (g *AnomalyGate) Reload() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.models != nil {
		return g.models.reload(g.Models, g.cfg)
	}
	g.stamps[0], g.stamps[1] = stamp(g.cfg.Model), stamp(g.cfg.Candidate)
	m, err := anomaly.Load(g.cfg.Model)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			g.Models.Set(nil)
			return fmt.Errorf("%s: %s does not exist; train one from the audit log with `airs guard train --out %s` (it is picked up without a restart): %w", NoAnomalyModel, g.cfg.Model, g.cfg.Model, fs.ErrNotExist)
		}
		return fmt.Errorf("anomaly gate: %w (the model in use, if any, stays)", err)
	}
	g.Models.Set(m)
	if g.cfg.Candidate != "" {
		c, err := anomaly.Load(g.cfg.Candidate)
		if err != nil {
			return fmt.Errorf("anomaly gate: candidate: %w (only the main model scores)", err)
		}
		g.Models.SetCandidate(c, g.cfg.CandidateShare)
	}
	return nil
}

func stamp(path string) fileStamp {
	if path == "" {
		return fileStamp{}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{mod: fi.ModTime(), size: fi.Size()}
}

func (g *AnomalyGate) watch() {
	defer g.stopped.Done()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	t := time.NewTicker(AnomalyWatchInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-hup:
		case <-t.C:
			g.mu.Lock()
			var same bool
			if g.models != nil {
				same = !g.models.changed(g.cfg)
			} else {
				same = g.stamps[0] == stamp(g.cfg.Model) && g.stamps[1] == stamp(g.cfg.Candidate)
			}
			g.mu.Unlock()
			if same {
				continue
			}
		}
		if err := g.Reload(); err != nil {
			g.log.Warn("anomaly: model reload", "err", err)
			continue
		}
		v, cv := g.Models.Versions()
		from := g.cfg.Model
		if g.models != nil {
			from = g.models.where()
		}
		g.log.Info("anomaly: model loaded", "file", from, "version", v, "candidate", cv)
	}
}

// Close stops the watcher.
func (g *AnomalyGate) Close() {
	if g.stop != nil {
		close(g.stop)
		g.stopped.Wait()
		g.stop = nil
	}
	if g.ownDB != nil {
		g.ownDB.Close()
		g.ownDB = nil
	}
}

// warningScorer logs calls at or above the warn threshold (the seed's
// "log a warning and continue"): the Manager airs builds has no logger of
// its own, and the audit record alone is not a warning anyone sees.
type warningScorer struct {
	inner pipeline.CallScorer
	at    uint8
	log   *slog.Logger
}

func (w *warningScorer) ScoreCall(c pipeline.CallFeatures) (uint8, string) {
	s, v := w.inner.ScoreCall(c)
	if v != "" && s >= w.at {
		w.log.Warn("anomalous call", "caller", c.Caller, "tool", c.Tool, "score", pipeline.AnomalyScoreOf(s), "model", v)
	}
	return s, v
}
