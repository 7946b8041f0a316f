package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/evals/replay"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/store/pg"
)

// The PostgreSQL state of one airs process (storage: in airs.yaml): one
// pool for every concern the configuration puts there — the audit log and
// claims (manager), the guard's reviews and models, and the engine's index,
// learned state, recommender and sessions (engine.Options.PG) — opened on
// first use and closed when the command ends (app.close).

// sharedPG is the process's database, opened (and migrated) once.
func (a *app) sharedPG() (*pg.DB, error) {
	if a.pgdb != nil {
		return a.pgdb, nil
	}
	c, err := a.config()
	if err != nil {
		return nil, err
	}
	db, err := openPG(c)
	if err != nil {
		return nil, err
	}
	a.pgdb = db
	return db, nil
}

// enginePG is the database the engine shares with the rest of the process:
// nil when airs.yaml puts nothing on PostgreSQL.
func (a *app) enginePG() (*pg.DB, error) {
	if a.cfg == nil || !a.cfg.Storage.UsesPostgres() {
		return nil, nil
	}
	return a.sharedPG()
}

// closePG closes the process's database, after everything that used it.
func (a *app) closePG() {
	if a.pgdb != nil {
		a.pgdb.Close()
		a.pgdb = nil
	}
}

// guardStores are the guard's stores on PostgreSQL (storage.guard:
// postgres); nil, nil with the files.
func (a *app) guardStores(c *config.Config) (guard.StateStore, guard.ModelStore, error) {
	if c.Storage.Guard != config.StoragePostgres {
		return nil, nil, nil
	}
	db, err := a.sharedPG()
	if err != nil {
		return nil, nil, err
	}
	return db.GuardStore(), db.AnomalyModels(), nil
}

// taskStore is where `airs task` keeps the task texts: the recommender's
// store storage.learned names.
func (a *app) taskStore(c *config.Config) (*recommender.Tasks, error) {
	if c.Storage.Learned == config.StoragePostgres {
		db, err := a.sharedPG()
		if err != nil {
			return nil, err
		}
		return recommender.OpenTasksIn(db.RecommenderStore()), nil
	}
	return recommender.OpenTasks(c.Home)
}

// recordedItems are the labelled requests of the session log replay and
// tune read: the file named (arg), else the recorded sessions of
// airs.yaml — the database's with storage.sessions: postgres. name says
// where they came from, for messages.
func (a *app) recordedItems(arg string, implicit bool) (items []replay.Item, unlabelled int, name string, err error) {
	if arg != "" {
		items, unlabelled, err = replay.Items(arg, implicit)
		return items, unlabelled, arg, err
	}
	c, err := a.config()
	if err != nil {
		return nil, 0, "", err
	}
	if c.Storage.Sessions != config.StoragePostgres {
		p, err := a.recordedSessions()
		if err != nil {
			return nil, 0, "", err
		}
		items, unlabelled, err = replay.Items(p, implicit)
		return items, unlabelled, p, err
	}
	db, err := a.sharedPG()
	if err != nil {
		return nil, 0, "", err
	}
	name = "the PostgreSQL session log (storage.dsn " + c.Storage.RedactedDSN() + ")"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	recs, err := db.SessionLog().ReadAll(ctx)
	if err != nil {
		return nil, 0, name, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(recs) == 0 {
		state := "recording is on"
		if !c.Recording.Enabled {
			state = "recording is off"
		}
		return nil, 0, name, &exitError{code: exitUsage, err: fmt.Errorf(`no recorded sessions in %s (%s)
hint: set 'recording: {enabled: true}' in airs.yaml ('airs help config'), then make requests with
  'airs chat' or 'airs serve' and /accept or /dismiss what they chose; or name a SESSIONS.jsonl`, name, state)}
	}
	items, unlabelled = replay.ItemsOf(recs, implicit)
	return items, unlabelled, name, nil
}

// saveTrainedModel keeps the model `airs guard train` made: with
// storage.guard: postgres in the database's slot for guard.anomaly.model
// (or .candidate, when --out names that file), where every replica's gate
// finds it; else, or when --out names another file, in the file out.
// slot is the slot it went to ("" for a file).
func (a *app) saveTrainedModel(c *config.Config, m *anomaly.Model, out string, outGiven bool) (slot string, err error) {
	_, models, err := a.guardStores(c)
	if err != nil {
		return "", err
	}
	switch {
	case models == nil:
	case !outGiven || out == c.Guard.Anomaly.Model:
		slot = guard.SlotModel
	case c.Guard.Anomaly.Candidate != "" && out == c.Guard.Anomaly.Candidate:
		slot = guard.SlotCandidate
	}
	if slot == "" {
		if err := os.MkdirAll(filepath.Dir(out), 0o700); err != nil {
			return "", err
		}
		if err := m.Save(out); err != nil {
			return "", fmt.Errorf("writing the model: %w", err)
		}
		return "", nil
	}
	b, err := m.MarshalJSON()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := models.SaveModel(ctx, slot, m.Version(), b); err != nil {
		return "", fmt.Errorf("storing the model: %w", err)
	}
	return slot, nil
}
