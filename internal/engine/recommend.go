package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/recommender"
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
	r, err := recommender.New(recommender.Config{
		Catalog: e.Catalog, Validate: e.Manager.Validate, Spaces: spaceNames(e.Config), Home: e.Config.Home,
	})
	if err != nil {
		return err
	}
	e.Recommender = r
	if e.Config.Home != "" {
		trainFromAudit(r, e.Config.AuditPath())
		trainFromSessions(r, sessionPath(e.Config))
	}
	ctx, cancel := context.WithCancel(context.Background())
	sub := e.Manager.Subscribe(1024)
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
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var rec audit.Record
		if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Outcome != "ok" || rec.Tool == "" {
			continue // the first line after a seek is partial
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
	for _, rec := range recs {
		if rec.Call != nil && rec.Request != "" && rec.Execution != nil && rec.Execution.Outcome == session.OutcomeOK {
			r.TrainText(rec.Request, rec.Call.Tool)
		}
	}
}
