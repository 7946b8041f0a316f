package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/pipeline/builtin"
	"github.com/airs-dev/airs/recommender"
	"github.com/airs-dev/airs/recommender/watch"
	"github.com/airs-dev/airs/session"
)

// What the recommender learns from at start, bounded so a long-lived
// AIRS_HOME does not make every start slower: the audit log's last
// historyTail bytes, and a session log of at most sessionLimit bytes.
const (
	historyTail  = 8 << 20
	sessionLimit = 64 << 20
	sessionGap   = 30 * time.Minute // a pause this long starts a new sequence
)

// startRecommender builds the recommender over the engine's catalog and the
// pipeline's schema stage, trains its history from the logs, and follows
// the pipeline's call events until Close.
func (e *Engine) startRecommender() error {
	rc := e.cfg.Recommend
	if !rc.Enabled {
		return nil
	}
	store, err := e.recommenderStore()
	if err != nil {
		return err
	}
	r, err := recommender.New(recommender.Config{
		Catalog: e.catalog, Validate: e.manager.Validate, Spaces: spaceNames(e.cfg), Home: e.cfg.Home, Store: store,
		TTL: rc.TTL, PerMinute: rc.PerMinute, MaxActive: rc.MaxActive, Threshold: rc.Threshold,
		Cooldown: rc.Cooldown, SuppressAt: rc.SuppressAt, SuppressFor: rc.SuppressFor,
		AfterCall:  e.afterCall, // speculate.go
		FileExists: func(space, rel string) bool { return e.fileIndex().Has(space, rel) },
		Env:        e.understandEnv, // objects.go: the caller's spaces and their files' names
	})
	if err != nil {
		return err
	}
	e.recommender = r
	if auditOnPG(e.cfg) {
		trainFromRecords(r, e.pgAuditTail(historyRecords))
	} else if e.cfg.Home != "" {
		trainFromAudit(r, e.cfg.AuditPath())
	}
	if sessionsOnPG(e.cfg) {
		trainFromSessionRecords(r, e.pgSessions())
	} else if e.cfg.Home != "" {
		trainFromSessions(r, sessionPath(e.cfg))
	}
	ctx, cancel := context.WithCancel(context.Background())
	sub := e.manager.Subscribe(1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx, sub.C)
	}()
	e.stopRecommender = func() error {
		cancel()
		<-done
		sub.Close()
		return r.Close()
	}
	return nil
}

// trainFromAudit feeds each caller's delivered calls, in order, to the
// history model. A missing or unreadable log teaches nothing.
func trainFromAudit(r *recommender.Recommender, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > historyTail {
		if _, err := f.Seek(st.Size()-historyTail, io.SeekStart); err != nil {
			return
		}
	}
	var recs []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec audit.Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue // the first line after a seek is partial
		}
		recs = append(recs, rec)
	}
	trainFromRecords(r, recs)
}

// trainFromRecords is trainFromAudit over records already read, oldest
// first (the PostgreSQL audit log's tail).
func trainFromRecords(r *recommender.Recommender, recs []audit.Record) {
	type seq struct {
		tools []string
		at    []time.Time
	}
	byCaller := map[string]*seq{}
	flush := func(s *seq) {
		if len(s.tools) > 0 {
			r.TrainHistory(s.tools, s.at)
		}
		s.tools, s.at = s.tools[:0], s.at[:0]
	}
	for i := range recs {
		rec := &recs[i]
		if rec.Outcome != "ok" || rec.Tool == "" || rec.Speculative {
			continue // a speculative call is nobody's
		}
		s := byCaller[rec.Caller]
		if s == nil {
			s = &seq{}
			byCaller[rec.Caller] = s
		}
		if n := len(s.at); n > 0 && rec.Time.Sub(s.at[n-1]) > sessionGap {
			flush(s)
		}
		s.tools, s.at = append(s.tools, rec.Tool), append(s.at, rec.Time)
	}
	for _, s := range byCaller {
		flush(s)
	}
}

// trainFromSessions teaches the text model which tool served which
// request, from the recorded requests whose call succeeded.
func trainFromSessions(r *recommender.Recommender, path string) {
	st, err := os.Stat(path)
	if err != nil || st.Size() > sessionLimit {
		return
	}
	recs, err := session.ReadFile(path)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return
	}
	trainFromSessionRecords(r, recs)
}

// trainFromSessionRecords is trainFromSessions over records already read
// (the database's, storage.sessions: postgres).
func trainFromSessionRecords(r *recommender.Recommender, recs []session.Record) {
	for _, rec := range recs {
		if rec.Call != nil && rec.Request != "" && rec.Execution != nil && rec.Execution.Outcome == session.OutcomeOK {
			r.TrainText(rec.Request, rec.Call.Tool)
		}
	}
}

// WatchSpaces starts the file watcher on the configured spaces, whose
// events become the recommender's space signal. The long-lived channels
// (chat, serve) start it; Close stops it.
func (e *Engine) WatchSpaces() error {
	if e.recommender == nil || !e.cfg.Recommend.Watch || len(e.cfg.Spaces) == 0 || e.watcher != nil {
		return nil
	}
	r := e.recommender
	w, err := watch.Start(context.Background(), watch.Config{Spaces: e.cfg.Spaces}, func(ev watch.Event) {
		if within(ev.Path, e.cfg.Home) {
			return // AIRS's own state, when a space holds AIRS_HOME
		}
		gone := ev.Op == watch.OpRemove || ev.Op == watch.OpRename
		e.noteFile(ev.Space, filepath.ToSlash(ev.Rel), gone)
		var also []recommender.FileName
		for _, a := range ev.Also {
			e.noteFile(a.Space, filepath.ToSlash(a.Rel), gone)
			also = append(also, recommender.FileName{Space: a.Space, Rel: filepath.ToSlash(a.Rel)})
		}
		switch ev.Op {
		case watch.OpCreate, watch.OpWrite, watch.OpOpen:
			// One file, one event, whatever the spaces it is in: each
			// agent hears of it once, under a name it may read.
			r.ObserveFile(recommender.FileEvent{Space: ev.Space, Rel: filepath.ToSlash(ev.Rel), Op: string(ev.Op), At: ev.At, Also: also})
		}
	})
	if err != nil {
		return fmt.Errorf("watching the spaces: %w", err)
	}
	e.watcher = w
	return nil
}

// WatchStats are the watcher's counters (zero when it is not running).
func (e *Engine) WatchStats() watch.Stats {
	if e.watcher == nil {
		return watch.Stats{}
	}
	return e.watcher.Stats()
}

// TouchFile tells the recommender a client opened (or otherwise used) a
// file of a space, as PUT /v1/context does. The caller must be able to
// read the space. An opening is the caller's own context: the other agents
// sharing the space hear of the file from the watcher when it changes,
// never of the caller's openings (each would spend their suggestions).
func (e *Engine) TouchFile(caller, space, rel string) error {
	if !e.readableSpaces(caller)[space] {
		return &pipeline.ToolCapabilityDenied{Required: []pipeline.Capability{{Kind: builtin.KindReadSpace, Arg: space}}}
	}
	if e.recommender == nil {
		return nil
	}
	rel = filepath.Clean(rel)
	if e.watcher != nil {
		r, err := e.watcher.Resolve(space, rel) // the watcher's checks: in the space, through no link out of it
		if err != nil {
			return err
		}
		rel = r
	}
	e.recommender.ObserveFileFor(caller, recommender.FileEvent{Space: space, Rel: filepath.ToSlash(rel), Op: "open"})
	return nil
}

// PrimeRecommender gives a one-shot command (airs recommend) the caller's
// context as the files tell it: the caller's calls of the last hour from the
// audit log, the files changed in the spaces it may read within the
// recommender's file window, and the chat lines typed in the last hour.
func (e *Engine) PrimeRecommender(caller string) {
	if e.recommender == nil || e.cfg.Home == "" {
		return
	}
	now := time.Now()
	var recent []pipeline.CallEvent
	if auditOnPG(e.cfg) {
		recent = recentCallsOf(e.pgAuditTail(recentRecords), caller, now.Add(-time.Hour))
	} else {
		recent = recentCalls(e.cfg.AuditPath(), caller, now.Add(-time.Hour))
	}
	var files []recommender.FileEvent
	for sp := range e.readableSpaces(caller) {
		files = append(files, recentFiles(sp, e.cfg.Spaces[sp], e.cfg.Home, now.Add(-10*time.Minute))...)
	}
	var turns []string
	hist := filepath.Join(e.cfg.Home, "chat_history")
	if st, err := os.Stat(hist); err == nil && now.Sub(st.ModTime()) < time.Hour {
		turns = tailLines(hist, 3)
	}
	e.recommender.Prime(caller, recent, files, turns)
}

func recentCalls(path, caller string, since time.Time) []pipeline.CallEvent {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > 1<<20 {
		_, _ = f.Seek(st.Size()-1<<20, io.SeekStart)
	}
	var recs []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec audit.Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			recs = append(recs, rec)
		}
	}
	return recentCallsOf(recs, caller, since)
}

// recentCallsOf picks the caller's last ten calls since the given time
// from records oldest first.
func recentCallsOf(recs []audit.Record, caller string, since time.Time) []pipeline.CallEvent {
	var out []pipeline.CallEvent
	for i := range recs {
		rec := &recs[i]
		if rec.Caller != caller || rec.Time.Before(since) || rec.Speculative {
			continue
		}
		out = append(out, pipeline.CallEvent{CallID: rec.CallID, Caller: rec.Caller, Provider: rec.Provider, Tool: rec.Tool,
			Version: rec.Version, Outcome: pipeline.Outcome(rec.Outcome), At: rec.Time})
	}
	if len(out) > 10 {
		out = out[len(out)-10:]
	}
	return out
}

// maxScan bounds the entries one space's scan for recent files visits.
const maxScan = 20000

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func recentFiles(space, dir, skip string, since time.Time) []recommender.FileEvent {
	var out []recommender.FileEvent
	n := 0
	root := os.DirFS(dir)
	_ = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if n++; n > maxScan {
			return fs.SkipAll
		}
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || within(filepath.Join(dir, p), skip)) {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(since) {
			out = append(out, recommender.FileEvent{Space: space, Rel: p, Op: "write", At: info.ModTime()})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b recommender.FileEvent) int { return a.At.Compare(b.At) })
	return out
}

func tailLines(path string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 4<<20 {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// writeRecommenderMetrics adds the recommender's and the watcher's
// counters to /metrics (Prometheus text).
func (e *Engine) writeRecommenderMetrics(w io.Writer) error {
	if e.recommender == nil {
		return nil
	}
	s := e.recommender.Stats()
	ws := e.WatchStats()
	_, err := fmt.Fprintf(w, `# HELP airs_recommender_updates_total Recommendation updates after a signal event.
# TYPE airs_recommender_updates_total counter
airs_recommender_updates_total %d
# HELP airs_recommendations_total Recommendations by what became of them.
# TYPE airs_recommendations_total counter
airs_recommendations_total{outcome="issued"} %d
airs_recommendations_total{outcome="accepted"} %d
airs_recommendations_total{outcome="dismissed"} %d
airs_recommendations_total{outcome="ignored"} %d
# HELP airs_recommendations_held_total Candidates not issued, by why.
# TYPE airs_recommendations_held_total counter
airs_recommendations_held_total{reason="rate_limited"} %d
airs_recommendations_held_total{reason="suppressed"} %d
airs_recommendations_held_total{reason="invalid_arguments"} %d
# HELP airs_recommendation_subscribers_cut_total Event-stream subscribers cut off for falling behind.
# TYPE airs_recommendation_subscribers_cut_total counter
airs_recommendation_subscribers_cut_total %d
# HELP airs_watch_dirs Directories of the spaces watched now.
# TYPE airs_watch_dirs gauge
airs_watch_dirs %d
# HELP airs_watch_events_total File events by what became of them.
# TYPE airs_watch_events_total counter
airs_watch_events_total{outcome="raw"} %d
airs_watch_events_total{outcome="delivered"} %d
airs_watch_events_total{outcome="dropped"} %d
# HELP airs_watch_errors_total Unreadable paths, failed watches, OS queue overflows.
# TYPE airs_watch_errors_total counter
airs_watch_errors_total %d
`, s.Updates, s.Issued, s.Accepted, s.Dismissed, s.Ignored, s.RateLimited, s.Suppressed, s.Invalid, s.SubscriberDrops,
		ws.Dirs, ws.Raw, ws.Delivered, ws.Dropped, ws.Errors)
	return err
}
