package recommender

import (
	"slices"
	"sync"
	"time"
)

// Answers: accept, dismiss, ignore, and who hears of them.

// Accept takes the caller's answer "yes" to id and returns the
// recommendation, for the channel to run through the pipeline.
func (r *Recommender) Accept(caller, id string) (*Recommendation, error) {
	return r.answer(caller, id, Accepted)
}

// Dismiss takes the caller's answer "no" to id.
func (r *Recommender) Dismiss(caller, id string) error {
	_, err := r.answer(caller, id, Dismissed)
	return err
}

func (r *Recommender) answer(caller, id string, o Outcome) (*Recommendation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cs := r.callers[caller]
	if cs == nil {
		return nil, ErrNotFound
	}
	i := slices.IndexFunc(cs.active, func(rec *Recommendation) bool { return rec.ID == id })
	if i < 0 {
		return nil, ErrNotFound
	}
	rec := cs.active[i]
	cs.active = slices.Delete(cs.active, i, i+1)
	r.feedback(rec, o)
	typ := "accepted"
	if o == Dismissed {
		typ = "dismissed"
	}
	r.publish(caller, Update{Type: typ, Recommendation: rec})
	cp := *rec
	return &cp, nil
}

// feedback teaches the models one answer and keeps it (r.mu held).
func (r *Recommender) feedback(rec *Recommendation, o Outcome) {
	r.fusion.Update(rec.Tool, rec.features, o)
	now := r.cfg.Now()
	switch o {
	case Accepted:
		r.stats.Accepted++
		if rec.text != "" {
			r.observeText(rec.text, rec.Tool)
		}
	case Dismissed:
		r.stats.Dismissed++
		r.dismissed(rec.Caller, rec.Context, rec.Tool, now)
	case Ignored:
		r.stats.Ignored++
	}
	if r.store != nil {
		fb := feedbackLine{At: now, Caller: rec.Caller, Tool: rec.Tool, Context: rec.Context, Outcome: outcomeName(o),
			Features: rec.features, Text: rec.text}
		if err := r.store.append(fb); err != nil {
			r.cfg.Logger.Error("recommender: feedback not kept", "err", err)
		}
	}
}

func (r *Recommender) dismissed(caller, context, tool string, now time.Time) {
	k := caller + "\x00" + context + "\x00" + tool
	s := r.suppress[k]
	if s == nil {
		if len(r.suppress) >= maxSuppression {
			r.evictSuppression(now)
		}
		s = &suppression{}
		r.suppress[k] = s
	}
	s.Dismissals++
	if s.Dismissals >= r.cfg.SuppressAt {
		s.Until = now.Add(r.cfg.SuppressFor)
	} else {
		s.Until = now.Add(r.cfg.Cooldown)
	}
}

func (r *Recommender) evictSuppression(now time.Time) {
	var oldest string
	var t time.Time
	for k, s := range r.suppress {
		if !now.Before(s.Until) {
			delete(r.suppress, k)
			continue
		}
		if oldest == "" || s.Until.Before(t) {
			oldest, t = k, s.Until
		}
	}
	if len(r.suppress) >= maxSuppression {
		delete(r.suppress, oldest)
	}
}

func (r *Recommender) suppressed(caller, context, tool string, now time.Time) bool {
	s := r.suppress[caller+"\x00"+context+"\x00"+tool]
	return s != nil && now.Before(s.Until)
}

func (r *Recommender) observeText(text, tool string) {
	r.textObs = appendBounded(r.textObs, textObs{Text: text, Tool: tool}, maxTextObs)
	if r.text != nil {
		r.text.Observe(text, tool)
	}
}

// Subscribe streams the caller's updates until cancel is called. A
// subscriber that falls subBuffer updates behind is cut off: its channel
// closes (counted in SubscriberDrops), and it resubscribes to resync.
func (r *Recommender) Subscribe(caller string) (<-chan Update, func()) {
	s := &subscriber{caller: caller, ch: make(chan Update, subBuffer)}
	r.mu.Lock()
	r.caller(caller)
	r.subs[s] = struct{}{}
	r.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			delete(r.subs, s)
			if !s.closed {
				close(s.ch)
				s.closed = true
			}
		})
	}
}

func (r *Recommender) publish(caller string, u Update) {
	if u.Recommendation != nil { // a copy: the live one keeps changing (Seen)
		cp := *u.Recommendation
		u.Recommendation = &cp
	}
	for s := range r.subs {
		if s.caller != caller {
			continue
		}
		select {
		case s.ch <- u:
		default:
			// A subscriber this far behind is cut off rather than fed a
			// stream with holes: its channel closes, and a client that
			// reconnects starts again from the live list.
			r.stats.SubscriberDrops++
			delete(r.subs, s)
			close(s.ch)
			s.closed = true
		}
	}
}
