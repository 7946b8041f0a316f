package client

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Keeping a server connected: a lost link is noticed, the server restarted
// within its budget, rested and retried with back-off, and callers wait for
// the link.

// watch follows a stdio server's process: one that exits between calls is
// restarted as one that died during one.
func (c *Conn) watch(l *link) {
	if l.proc == nil {
		return
	}
	go func() {
		<-l.proc.exited
		c.lost(l, "the process "+l.proc.exitText())
	}()
}

// lost takes l out of service (killing its process) and starts a restart.
func (c *Conn) lost(l *link, why string) {
	c.mu.Lock()
	current := c.cur == l
	if current {
		c.cur = nil
	}
	closed := c.closed
	c.mu.Unlock()
	if !current || closed {
		return
	}
	c.log.Warn("mcp server lost: restarting it", "why", why)
	go func() {
		if l.proc != nil {
			l.proc.kill()
		}
		l.sess.Close()
	}()
	c.kick()
}

// kick starts a restart unless one runs; it returns the channel closed
// when the restart ends.
func (c *Conn) kick() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.restarting == nil {
		ch := make(chan struct{})
		c.restarting = ch
		go c.restart(ch)
	}
	return c.restarting
}

// restart reconnects within the budget, after a backoff that doubles with
// each restart of the last minute (0, 250 ms, 500 ms … at most 8 s). Past
// the budget the server rests (rest): it is not abandoned.
func (c *Conn) restart(done chan struct{}) {
	defer func() {
		c.mu.Lock()
		c.restarting = nil
		c.mu.Unlock()
		close(done)
	}()
	if c.srv.URL != "" && !c.srv.noRedial {
		c.reconnect()
		return
	}
	c.mu.Lock()
	now := time.Now()
	c.restarts = slices.DeleteFunc(c.restarts, func(t time.Time) bool { return now.Sub(t) > time.Minute })
	k := len(c.restarts)
	if c.closed || c.srv.noRedial || c.srv.RestartsPerMinute <= 0 {
		closed := c.closed
		c.mu.Unlock()
		if !closed {
			c.gaveUp.Store(true)
			c.log.Error("mcp server given up: it died and restarts_per_minute is 0 (never restart); its tools are deregistered at their next call")
		}
		return
	}
	if k >= c.srv.RestartsPerMinute {
		c.mu.Unlock()
		c.rest()
		return
	}
	c.restarts = append(c.restarts, now)
	c.mu.Unlock()
	if k > 0 {
		time.Sleep(min(250*time.Millisecond<<(k-1), 8*time.Second))
	}
	if c.connect() {
		c.log.Info("mcp server restarted", "restarts_last_minute", k+1)
	}
}

// rest is what follows a server that died more often than
// restarts_per_minute allows: it is tried again in the background after
// RestBackoff, then after twice that each time it fails, up to
// MaxRestBackoff, until it starts or the Conn is closed. Its tools stay
// registered; a call meanwhile fails at once, provider_unavailable with
// the next attempt as its Retry-After. A server that starts again has its
// restart budget back.
func (c *Conn) rest() {
	wait := c.srv.restBackoff()
	c.nextTry.Store(time.Now().Add(wait).UnixNano())
	c.resting.Store(true)
	c.log.Error("mcp server resting: it died more often than restarts_per_minute allows; AIRS tries it again in the background",
		"restarts_per_minute", c.srv.RestartsPerMinute, "next_try_in", wait)
	go func() {
		for {
			select {
			case <-time.After(wait):
			case <-c.quit:
				return
			}
			if c.connect() {
				c.mu.Lock()
				c.restarts = nil
				c.mu.Unlock()
				c.resting.Store(false)
				c.log.Info("mcp server started again after resting")
				return
			}
			wait = min(2*wait, MaxRestBackoff)
			c.nextTry.Store(time.Now().Add(wait).UnixNano())
			c.log.Warn("mcp server still does not start: resting longer", "next_try_in", wait)
		}
	}()
}

// connect dials the server again and makes the new link current, the
// registry following its tool list; false if it could not.
func (c *Conn) connect() bool {
	ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
	defer cancel()
	l, err := c.dial(ctx)
	if err != nil {
		c.log.Warn("mcp server restart failed", "err", err)
		return false
	}
	changed, err := c.sync(ctx, l, false)
	if err != nil {
		c.log.Warn("mcp server restart: listing its tools failed", "err", err)
		l.close(c.srv.grace())
		return false
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		l.close(c.srv.grace())
		return false
	}
	c.cur = l
	c.mu.Unlock()
	c.Restarted.Add(1)
	c.watch(l)
	if changed {
		c.changed()
	}
	return true
}

// Backoff of reconnect: the first retry after httpRetryMin, doubling up
// to httpRetryMax.
const (
	httpRetryMin = 250 * time.Millisecond
	httpRetryMax = 30 * time.Second
)

// reconnect is restart for a streamable HTTP server. It is not AIRS's
// process, so there is nothing to kill and no restart budget to spend
// (restarts_per_minute is for processes): AIRS dials again at once and,
// while the server does not answer, again after a backoff doubling up to
// 30 s, in the background, until it answers or the Conn is closed. While
// it is down a call fails at once (provider_unavailable, with the next
// attempt as Retry-After) instead of waiting for a server that is away.
func (c *Conn) reconnect() {
	if c.connect() {
		c.log.Info("mcp server reconnected")
		return
	}
	wait := httpRetryMin
	c.nextTry.Store(time.Now().Add(wait).UnixNano())
	c.down.Store(true)
	go func() {
		defer c.down.Store(false)
		for {
			select {
			case <-time.After(wait):
			case <-c.quit:
				return
			}
			if c.connect() {
				c.log.Info("mcp server reconnected")
				return
			}
			wait = min(2*wait, httpRetryMax)
			c.nextTry.Store(time.Now().Add(wait).UnixNano())
		}
	}()
}

// get returns the live link, waiting for a restart when one is due.
func (c *Conn) get(ctx context.Context) (*link, error) {
	for {
		c.mu.Lock()
		l, closed := c.cur, c.closed
		c.mu.Unlock()
		switch {
		case l != nil:
			return l, nil
		case closed || c.gaveUp.Load():
			return nil, fmt.Errorf("mcp server %s is gone (it died and restarts_per_minute is 0): %w", c.srv.Name, pipeline.ErrProviderDead)
		case c.resting.Load():
			retry := max(time.Until(time.Unix(0, c.nextTry.Load())), 0)
			return nil, &pipeline.ProviderUnavailable{Provider: c.id, Tool: "the tools of mcp server " + c.srv.Name, RetryAfter: retry,
				Reason: fmt.Sprintf("it died more often than restarts_per_minute (%d) allows; AIRS starts it again in the background", c.srv.RestartsPerMinute)}
		case c.down.Load():
			retry := max(time.Until(time.Unix(0, c.nextTry.Load())), 0)
			return nil, &pipeline.ProviderUnavailable{Provider: c.id, Tool: "the tools of mcp server " + c.srv.Name, RetryAfter: retry,
				Reason: fmt.Sprintf("it does not answer at %s; AIRS reconnects in the background", c.srv.URL)}
		}
		ch := c.kick()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
