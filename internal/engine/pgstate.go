package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/guard/anomaly"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/scoring"
	"github.com/airs-dev/airs/session"
	"github.com/airs-dev/airs/store/pg"
)

// openPGIndex opens the tool index on PostgreSQL + pgvector
// (storage.index: postgres): the vectors, the documents and the lexical
// basis live in the database every replica shares, so a tool is embedded
// once for all of them. Syncs are serialised by the store's advisory lock
// rather than index.lock, which only covers one machine.
func (e *Engine) openPGIndex(ctx context.Context, emb embeddings.Embedder) error {
	db, err := e.pgDB(ctx)
	if err != nil {
		return err
	}
	ix, err := embeddings.Open(ctx, emb, embeddings.Options{Store: db.ToolIndex()})
	if err != nil {
		return fmt.Errorf("opening the tool index on PostgreSQL (storage.dsn %s): %w", e.cfg.Storage.RedactedDSN(), err)
	}
	e.index = ix
	return e.Reindex(ctx)
}

// pgDB connects to storage.dsn once per engine and migrates its schema.
func (e *Engine) pgDB(ctx context.Context) (*pg.DB, error) {
	if e.pg != nil {
		return e.pg, nil
	}
	if e.sharedPG != nil { // the process's (Options.PG): its owner closes it
		e.pg, e.pgShared = e.sharedPG, true
		return e.pg, nil
	}
	db, err := OpenPG(ctx, e.cfg)
	if err != nil {
		return nil, err
	}
	e.pg = db
	return db, nil
}

// OpenPG connects to storage.dsn and migrates its schema, within 30 s of
// ctx: the one way an airs process opens its PostgreSQL state (cmd/airs's
// builder opens the process's pool with it; the engine and the anomaly
// gate, when none is handed to them, their own).
func OpenPG(ctx context.Context, cfg *config.Config) (*pg.DB, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	db, err := pg.Open(ctx, cfg.Storage.DSN)
	if err != nil {
		return nil, fmt.Errorf("opening the PostgreSQL state (storage.dsn %s): %w", cfg.Storage.RedactedDSN(), err)
	}
	return db, nil
}

// closePG closes the engine's database connections, if it opened any.
func (e *Engine) closePG() {
	if e.pg != nil && !e.pgShared {
		e.pg.Close()
	}
	e.pg, e.pgShared = nil, false
}

// indexOnPG reports whether cfg puts the tool index on PostgreSQL.
func indexOnPG(cfg *config.Config) bool { return cfg.Storage.Index == config.StoragePostgres }

// auditOnPG reports whether cfg keeps the audit log in PostgreSQL: then
// the readers of the log's recent past (the anomaly gate's history, the
// recommender's training and a caller's recent calls) read it there.
func auditOnPG(cfg *config.Config) bool { return cfg.Storage.Audit == config.StoragePostgres }

// How many of the PostgreSQL audit log's last records the recommender
// trains on (about the file log's last historyTail bytes: records are
// ~400 bytes) and how many a caller's recent calls are picked from (about
// the file's last MiB).
const (
	historyRecords = 20000
	recentRecords  = 2500
	// sessionRecords: the recorded sessions the recommender's text model
	// trains on (about the file log's sessionLimit at ~1 KiB a record).
	sessionRecords = 50000
)

// pgAuditTail is the last n records of the PostgreSQL audit log, oldest
// first; nil when it cannot be read (as a missing file log: the readers
// start empty rather than fail the command).
func (e *Engine) pgAuditTail(n int) []audit.Record {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := e.pgDB(ctx)
	if err != nil {
		return nil
	}
	recs, err := db.TailAudit(ctx, n)
	if err != nil {
		return nil
	}
	return recs
}

// PGAuditTail reads the last n records of the PostgreSQL audit log with a
// connection of its own, for readers that run before an Engine exists
// (StartAnomaly).
func PGAuditTail(cfg *config.Config, n int) ([]audit.Record, error) {
	db, err := OpenPG(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return db.TailAudit(ctx, n)
}

// learnedOnPG reports whether cfg keeps the ranker's learned statistics
// and preferences in PostgreSQL (storage.learned: postgres).
func learnedOnPG(cfg *config.Config) bool { return cfg.Storage.Learned == config.StoragePostgres }

// pgLearned is the learned state as airs_state's "learned" document: the
// file backend's read–merge–write, under the row's lock.
type pgLearned struct{ st *pg.State }

func (p pgLearned) read() (scoring.Learned, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := p.st.Read(ctx)
	if err != nil {
		return scoring.Learned{V: scoring.LearnedVersion}, err
	}
	return parseLearned(b, "in PostgreSQL (airs_state 'learned')", "DELETE that row")
}

func (p pgLearned) update(fn func(scoring.Learned) (*scoring.Learned, error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.st.Update(ctx, func(cur []byte) ([]byte, error) {
		stored, err := parseLearned(cur, "in PostgreSQL (airs_state 'learned')", "DELETE that row")
		if err != nil {
			return nil, err
		}
		next, err := fn(stored)
		if err != nil || next == nil {
			return nil, err
		}
		return json.Marshal(next)
	})
}

// openPGLearned opens the learned state in the engine's database.
func (e *Engine) openPGLearned() (*learnedStore, error) {
	db, err := e.pgDB(context.Background())
	if err != nil {
		return nil, err
	}
	return openLearnedIn(pgLearned{db.State("learned")}, e.ranker, learnedSaveEvery)
}

// guardOnPG reports whether cfg keeps the guard's reviews, grants and
// anomaly models in PostgreSQL (storage.guard: postgres).
func guardOnPG(cfg *config.Config) bool { return cfg.Storage.Guard == config.StoragePostgres }

// sessionsOnPG reports whether recorded sessions go to PostgreSQL
// (storage.sessions: postgres).
func sessionsOnPG(cfg *config.Config) bool { return cfg.Storage.Sessions == config.StoragePostgres }

// pgAuditTailOn is PGAuditTail on db when the process has one open.
func pgAuditTailOn(cfg *config.Config, db *pg.DB, n int) ([]audit.Record, error) {
	if db == nil {
		return PGAuditTail(cfg, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return db.TailAudit(ctx, n)
}

// pgModels are the anomaly gate's models in the database's slots
// (storage.guard: postgres): `airs guard train` stores one, and every
// replica's gate polls the slots' versions (one primary-key read each
// AnomalyWatchInterval) and reloads on a change. Polling rather than
// LISTEN/NOTIFY: the gate already polls the model files at that interval,
// a model changes rarely and a few seconds' delay is harmless, and a
// notification missed while a connection was down would need the poll
// anyway — LISTEN would also pin one connection per replica.
type pgModels struct {
	st      guard.ModelStore
	err     error     // the database could not be opened
	version [2]string // the versions loaded (model, candidate)
}

// openPGModels opens the model store on db, or on a database of its own
// when db is nil (returned, for the gate to close).
func openPGModels(cfg *config.Config, db *pg.DB) (*pgModels, *pg.DB) {
	var own *pg.DB
	if db == nil {
		var err error
		if db, err = OpenPG(context.Background(), cfg); err != nil {
			return &pgModels{err: err}, nil
		}
		own = db
	}
	return &pgModels{st: db.AnomalyModels()}, own
}

func (p *pgModels) where() string {
	if p.st == nil {
		return "PostgreSQL"
	}
	return p.st.Where()
}

// reload installs the slots' models in h, as Reload does the files'.
func (p *pgModels) reload(h *anomaly.Holder, a config.Anomaly) error {
	if p.err != nil {
		return fmt.Errorf("anomaly gate: %w (the model in use, if any, stays)", p.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	load := func(slot string) (*anomaly.Model, string, error) {
		v, b, err := p.st.LoadModel(ctx, slot)
		if err != nil {
			return nil, "", err
		}
		m, err := anomaly.Parse(b)
		return m, v, err
	}
	m, v, err := load(guard.SlotModel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			h.Set(nil)
			p.version = [2]string{}
			return fmt.Errorf("%s: no model in %s yet; train one from the audit log with `airs guard train` (every replica picks it up without a restart): %w", NoAnomalyModel, p.st.Where(), fs.ErrNotExist)
		}
		return fmt.Errorf("anomaly gate: %w (the model in use, if any, stays)", err)
	}
	h.Set(m)
	p.version = [2]string{v, ""}
	if a.Candidate != "" {
		c, cv, err := load(guard.SlotCandidate)
		if err != nil {
			return fmt.Errorf("anomaly gate: candidate: %w (only the main model scores; `airs guard train --out` with guard.anomaly.candidate's path stores one)", err)
		}
		h.SetCandidate(c, a.CandidateShare)
		p.version[1] = cv
	}
	return nil
}

// changed reports whether a slot holds another version than the one
// loaded (a read error counts as no change: the next poll tries again).
func (p *pgModels) changed(a config.Anomaly) bool {
	if p.err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := p.st.ModelVersion(ctx, guard.SlotModel)
	if err != nil {
		return false
	}
	if v != p.version[0] {
		return true
	}
	if a.Candidate == "" {
		return false
	}
	cv, err := p.st.ModelVersion(ctx, guard.SlotCandidate)
	return err == nil && cv != p.version[1]
}

// openRecorder opens the session recorder storage.sessions names: the file
// in recording.dir, or the database's airs_sessions (every replica's
// turns in one log, each committed before the turn's response).
func (e *Engine) openRecorder(ctx context.Context) (*session.Recorder, error) {
	cfg := e.cfg
	if !sessionsOnPG(cfg) {
		return session.Open(sessionPath(cfg), session.Options{Redact: cfg.Recording.Redact})
	}
	db, err := e.pgDB(ctx)
	if err != nil {
		return nil, err
	}
	return session.OpenSink(db.SessionLog(), "PostgreSQL airs_sessions (storage.dsn "+cfg.Storage.RedactedDSN()+")",
		session.Options{Redact: cfg.Recording.Redact}), nil
}

// pgSessions is the recorded sessions in the database, for the
// recommender's training: the last sessionRecords of them, oldest first.
func (e *Engine) pgSessions() []session.Record {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := e.pgDB(ctx)
	if err != nil {
		return nil
	}
	recs, err := db.SessionLog().Tail(ctx, sessionRecords)
	if err != nil {
		return nil
	}
	return recs
}

// recommenderStore is the recommender's store on PostgreSQL
// (storage.learned: postgres covers it: both are learned from the users'
// answers); nil: HOME's files.
func (e *Engine) recommenderStore() (recommender.Store, error) {
	if !learnedOnPG(e.cfg) {
		return nil, nil
	}
	db, err := e.pgDB(context.Background())
	if err != nil {
		return nil, err
	}
	return db.RecommenderStore(), nil
}
