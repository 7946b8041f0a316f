package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/mcp/relay"
	"github.com/airs-dev/airs/pipeline"
)

// ConnectTimeout bounds starting a server and listing its tools (npx may
// have to download the package first).
const ConnectTimeout = 60 * time.Second

// DefaultRestBackoff is how long a server that died more often than its
// restart budget allows rests before it is tried again (Server.RestBackoff);
// each failed attempt doubles it, up to MaxRestBackoff.
const (
	DefaultRestBackoff = time.Minute
	MaxRestBackoff     = 30 * time.Minute
)

// Conn is one configured server, connected: its tools are in the registry
// under provider ProviderID(Name), and it is kept alive — a stdio server
// that dies is restarted with backoff, at most RestartsPerMinute times a
// minute; past that it rests and is tried again with a longer backoff
// (rest), its calls failing meanwhile with a Retry-After.
type Conn struct {
	srv    Server
	reg    *pipeline.Registry
	id     string
	log    *slog.Logger
	client *mcp.Client

	mu          sync.Mutex
	cur         *link         // nil while down
	restarting  chan struct{} // non-nil while a restart runs; closed when it ends
	restarts    []time.Time   // restarts within the last minute
	closed      bool
	registered  map[string]pipeline.Tool // by AIRS name
	unavailable []Unavailable
	// The pins (pin.go): made or accepted by this Conn (kept even if the
	// store failed to save them), the last listing, the tools held because
	// they differ from their pins, and the fingerprints already logged.
	pins     PinStore
	ownPins  map[string]Pin
	listed   []*mcp.Tool
	changes  []Change
	loggedFP map[string]string

	syncMu sync.Mutex // one tool-list sync at a time
	// gaveUp: the server died and may not be restarted (restarts_per_minute
	// 0), or the Conn is closed. resting: it died too often and is tried
	// again at nextTry (rest).
	gaveUp  atomic.Bool
	resting atomic.Bool
	// An HTTP server that does not answer (reconnect): down while
	// reconnect's background loop runs, nextTry its next attempt
	// (UnixNano; a resting stdio server's too), quit closed by Close to
	// end the loops.
	down     atomic.Bool
	nextTry  atomic.Int64
	quit     chan struct{}
	onChange atomic.Pointer[func()]
	sampler  atomic.Pointer[Sampler] // nil: sampling is refused (no-LLM mode)
	// Progress of relayed calls: the token AIRS sent → where it goes.
	progressSeq atomic.Int64
	progressTo  sync.Map
	// Counters for tests and the review command.
	Kills, Restarted atomic.Int64
}

// link is one connection: the session and, for stdio, the process.
type link struct {
	sess *mcp.ClientSession
	proc *process   // nil for HTTP and a given transport
	lim  *lineLimit // the read side's bound (stdio), or the HTTP client's
	http *httpLimit // nil unless HTTP
}

// ProviderID is the registry's provider id of MCP server name.
func ProviderID(name string) string { return "mcp:" + name }

// Connect starts (or reaches) the server, lists its tools and registers
// them. A tool that cannot be offered is in Unavailable with its reason;
// a name that another provider already registers is an error naming both,
// and nothing of the server is registered then.
func Connect(ctx context.Context, reg *pipeline.Registry, s Server) (*Conn, error) {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Conn{srv: s, reg: reg, id: ProviderID(s.Name), log: s.Logger.With("mcp_server", s.Name), registered: map[string]pipeline.Tool{}, quit: make(chan struct{}),
		pins: s.Pins, ownPins: map[string]Pin{}, loggedFP: map[string]string{}}
	if c.pins == nil {
		c.pins = MemoryPins()
	}
	opts := &mcp.ClientOptions{
		ToolListChangedHandler:      func(_ context.Context, req *mcp.ToolListChangedRequest) { go c.listChanged(req.Session) },
		ProgressNotificationHandler: c.progress,
		CreateMessageHandler:        c.createMessage,
		Capabilities:                &mcp.ClientCapabilities{},
	}
	if s.NoSampling {
		// Not advertised: a server that asks anyway gets the go-sdk's
		// method-not-found.
		opts.CreateMessageHandler = nil
	}
	c.client = mcp.NewClient(&mcp.Implementation{Name: "airs", Version: s.ClientVersion}, opts)
	cctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	l, err := c.dial(cctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.sync(cctx, l, true); err != nil {
		l.close(s.grace())
		return nil, err
	}
	c.mu.Lock()
	c.cur = l
	c.mu.Unlock()
	c.watch(l)
	reg.SetLiveness(c.id, func() bool { return !c.gaveUp.Load() })
	go c.followPins()
	return c, nil
}

// Name is the server's configured name.
func (c *Conn) Name() string { return c.srv.Name }

// Tools are the server's tools as registered, sorted by name.
func (c *Conn) Tools() []pipeline.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]pipeline.Tool, 0, len(c.registered))
	for _, t := range c.registered {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b pipeline.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Unavailable are the tools the server lists that AIRS does not offer.
func (c *Conn) Unavailable() []Unavailable {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.unavailable)
}

// OnChange sets what runs after the server's tool set changed (a
// notifications/tools/list_changed, a restart that lists other tools): the
// engine reindexes.
func (c *Conn) OnChange(f func()) { c.onChange.Store(&f) }

// GaveUp reports whether the server is out of service for more than a
// restart: it died with restarts_per_minute 0 (its tools are deregistered
// at their next lookup), or more often than restarts_per_minute allows (it
// rests and is tried again, see Resting).
func (c *Conn) GaveUp() bool { return c.gaveUp.Load() || c.resting.Load() }

// Resting reports whether the server died more often than its restart
// budget allows and waits for its next attempt (NextTry).
func (c *Conn) Resting() bool { return c.resting.Load() }

// NextTry is when a resting (or unreachable HTTP) server is tried next.
func (c *Conn) NextTry() time.Time { return time.Unix(0, c.nextTry.Load()) }

// Close ends the connection (a stdio server: stdin closed, then SIGTERM,
// then SIGKILL, each after the grace period) and deregisters its tools.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	l := c.cur
	c.cur = nil
	c.mu.Unlock()
	close(c.quit)
	c.gaveUp.Store(true)
	if l != nil {
		l.close(c.srv.grace())
	}
	c.reg.DeregisterProvider(c.id)
	return nil
}

// dial makes one connection and initializes the session.
func (c *Conn) dial(ctx context.Context) (*link, error) {
	s := c.srv
	l := &link{}
	var t mcp.Transport
	switch {
	case s.Transport != nil:
		t = s.Transport
	case s.URL != "":
		l.http = &httpLimit{max: s.maxMessage()}
		hc := s.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		hc2 := *hc
		base := hc2.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		hc2.Transport = &headerTransport{base: base, headers: s.Headers, limit: l.http}
		// The go-sdk's own event bound is set a little above AIRS's line
		// bound, so that AIRS's trips first and the call can say why.
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: &hc2, MaxEventSize: s.maxMessage() + 64<<10, MaxRetries: -1}
	case len(s.Command) > 0:
		p, err := startProcess(s.Command, s.Env, s.Dir, s.maxMessage())
		if err != nil {
			return nil, fmt.Errorf("mcp server %s: starting %q: %v: fix mcp.servers.%s.command in airs.yaml", s.Name, strings.Join(s.Command, " "), err, s.Name)
		}
		l.proc, l.lim = p, p.stdout
		// AIRS bounds the line itself (lineLimit) so that it can tell a
		// message too large from a server that broke the protocol.
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin, MaxLineLength: -1}
	default:
		return nil, fmt.Errorf("mcp server %s: no command and no url", s.Name)
	}
	sess, err := c.client.Connect(ctx, t, nil)
	if err != nil {
		why := err.Error()
		if l.proc != nil {
			if l.proc.hasExited(200 * time.Millisecond) {
				why = "the process " + l.proc.exitText()
			}
			l.proc.kill()
		}
		return nil, fmt.Errorf("mcp server %s: connecting: %s", s.Name, why)
	}
	if s.Transport != nil {
		c.srv.Transport = nil // used once: a given transport cannot be dialled again
		c.srv.noRedial = true
	}
	l.sess = sess
	return l, nil
}

// close ends the link gracefully (see Conn.Close).
func (l *link) close(grace time.Duration) {
	done := make(chan struct{})
	go func() {
		l.sess.Close()
		close(done)
	}()
	if l.proc == nil {
		<-done
		return
	}
	l.proc.stop(grace)
	<-done
}

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

func (c *Conn) changed() {
	if f := c.onChange.Load(); f != nil && *f != nil {
		(*f)()
	}
}

// listChanged answers notifications/tools/list_changed: the tools are
// listed again and the registry follows.
func (c *Conn) listChanged(sess *mcp.ClientSession) {
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if l == nil || l.sess != sess {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
	defer cancel()
	changed, err := c.sync(ctx, l, false)
	if err != nil {
		c.log.Warn("mcp server: re-listing its tools after list_changed failed", "err", err)
		return
	}
	if changed {
		c.changed()
	}
}

// sync lists the tools of l and brings the registry in line: new and
// changed tools registered, tools no longer listed deregistered. first
// makes a collision an error (Connect refuses the server); later, the
// colliding tool is only left out.
func (c *Conn) sync(ctx context.Context, l *link, first bool) (changed bool, err error) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	s := c.srv
	max := s.maxTools()
	var listed []*mcp.Tool
	for t, err := range l.sess.Tools(ctx, nil) {
		if err != nil {
			return false, fmt.Errorf("mcp server %s: listing tools: %v", s.Name, err)
		}
		if len(listed) == max {
			return false, fmt.Errorf("mcp server %s lists more than %d tools: raise mcp.servers.%s.max_tools in airs.yaml if that is intended", s.Name, max, s.Name)
		}
		listed = append(listed, t)
	}
	pins, err := c.pins.Pins(s.Name)
	if err != nil {
		return false, fmt.Errorf("mcp server %s: reading its tools' pins: %v", s.Name, err)
	}
	c.mu.Lock()
	have := c.registered
	pins = maps.Clone(pins)
	if pins == nil {
		pins = map[string]Pin{}
	}
	for k, p := range c.ownPins {
		if _, ok := pins[k]; !ok {
			pins[k] = p
		}
	}
	c.mu.Unlock()
	// The first listing of a server never listed is what was granted.
	firstListing := len(pins) == 0
	newPins := map[string]Pin{}
	var changes []Change
	want := map[string]pipeline.Tool{}
	var skipped []Unavailable
	byMCP := map[string]string{} // AIRS name → MCP name
	for _, mt := range listed {
		t, err := ToolFromMCP(s, mt)
		if err == nil {
			c.pin(mt, &t, pins, firstListing, newPins, &changes)
		}
		if old, ok := have[t.Name]; err == nil && !(ok && reflect.DeepEqual(old, t)) {
			err = checkGrammar(t) // a tool registered as it is passed it already
		}
		if err != nil {
			skipped = append(skipped, Unavailable{mt.Name, err.Error()})
			continue
		}
		if _, dup := want[t.Name]; dup {
			skipped = append(skipped, Unavailable{mt.Name, "listed twice"})
			continue
		}
		for _, o := range c.reg.Providers(t.Name) {
			if o.Provider != c.id {
				err := fmt.Errorf("mcp server %s: tool %s collides with %s of provider %s: set a prefix: for the server in airs.yaml", s.Name, t.Name, o.Tool.Name, o.Provider)
				if first {
					return false, err
				}
				skipped = append(skipped, Unavailable{mt.Name, err.Error()})
				t.Name = ""
				break
			}
		}
		if t.Name != "" {
			want[t.Name] = t
			byMCP[t.Name] = mt.Name
		}
	}
	next := map[string]pipeline.Tool{}
	for name, t := range want {
		if old, ok := have[name]; ok && reflect.DeepEqual(old, t) {
			next[name] = t
			continue
		}
		mcpName := byMCP[name]
		// ContextBound: the SDK's request returns at cancellation (and a
		// server that does not stop is killed), so the pipeline need not
		// hand the call to a goroutine of its own.
		h := pipeline.ContextBoundFunc(func(ctx context.Context, params json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
			return c.invoke(ctx, mcpName, name, params)
		})
		err := c.reg.Register(c.id, t, h)
		if err != nil && t.ReturnSchema != nil {
			// An outputSchema the validator cannot compile costs the tool
			// its return check, not its place.
			c.log.Warn("mcp tool: its outputSchema does not compile; its results are not checked against it", "tool", mcpName, "err", err)
			t.ReturnSchema = nil
			err = c.reg.Register(c.id, t, h)
		}
		if err != nil {
			// Registration compiles the schema: one the validator cannot
			// compile leaves that tool out, with the reason.
			skipped = append(skipped, Unavailable{mcpName, err.Error()})
			continue
		}
		next[name] = t
		changed = true
	}
	for name := range have {
		if _, ok := next[name]; !ok {
			c.reg.Deregister(c.id, name, "")
			changed = true
		}
	}
	c.reg.SetRuntime(c.id, pipeline.RuntimeMCP) // a hop per call: the latency model's runtime feature
	slices.SortFunc(skipped, func(a, b Unavailable) int { return strings.Compare(a.Tool, b.Tool) })
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Tool, b.Tool) })
	c.mu.Lock()
	c.registered, c.unavailable = next, skipped
	c.listed, c.changes = listed, changes
	maps.Copy(c.ownPins, newPins)
	c.mu.Unlock()
	if len(newPins) > 0 {
		if err := c.pins.Update(s.Name, newPins); err != nil {
			c.log.Warn("mcp server: saving its tools' pins failed; they hold while AIRS runs", "err", err)
		}
	}
	c.logChanges(changes)
	for _, u := range skipped {
		c.log.Warn("mcp tool unavailable", "tool", u.Tool, "reason", u.Reason)
	}
	return changed, nil
}

// invoke calls one tool (name, AIRS's airsName): the handler of every
// tool of the server. A channel that relays (mcp/relay) gets the whole
// result and the server's progress.
func (c *Conn) invoke(ctx context.Context, name, airsName string, params json.RawMessage) (json.RawMessage, error) {
	l, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := c.callContext(ctx)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: params}
	rc := relay.FromContext(ctx)
	var handled chan struct{}
	if rc != nil && rc.Progress != nil {
		tok := c.progressSeq.Add(1)
		p.SetProgressToken(tok)
		handled = make(chan struct{}, 1)
		c.progressTo.Store(tok, progressRoute{rc.Progress, handled})
		// The go-sdk hands a result to its caller as it reads it, and the
		// notifications read before it to their handler in turn: the last
		// progress may be handled just after the result.
		defer time.AfterFunc(progressGrace, func() { c.progressTo.Delete(tok) })
	}
	res, err := l.sess.CallTool(callCtx, p)
	if handled != nil && err == nil {
		settleProgress(handled)
	}
	if err != nil {
		if ferr, ok := c.callFailed(ctx, callCtx, l, err); ok {
			return nil, ferr
		}
		var se *SampleError
		if errors.As(err, &se) {
			// The server asked AIRS to sample and AIRS could not: the
			// connection is fine.
			return nil, pipeline.Reject("sampling_failed", se.Error())
		}
		return nil, c.broken(l, err)
	}
	if res.IsError {
		return nil, pipeline.Reject("tool_error", contentText(res.Content))
	}
	var out json.RawMessage
	if res.StructuredContent != nil {
		out, err = c.encodeResult(res.StructuredContent)
	} else {
		out, err = c.encodeResult(res.Content)
	}
	if err == nil && rc != nil {
		// What is relayed is the whole result: it keeps to the same bound.
		if whole, err := json.Marshal(res); err == nil && len(whole) > c.srv.maxResponse() {
			return nil, pipeline.Reject("response_too_large", fmt.Sprintf("the server's result is %d bytes with all its content, over max_response_bytes (%d): ask for less, or raise mcp.servers.%s.max_response_bytes in airs.yaml", len(whole), c.srv.maxResponse(), c.srv.Name))
		}
		rc.SetResult(airsName, out, res)
	}
	return out, err
}

// progressGrace is how long after a call's result its progress is still
// passed on.
const progressGrace = 2 * time.Second

// progress passes a server's progress notification to the call that
// asked for it (its token is AIRS's own, one per relayed call).
func (c *Conn) progress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	var tok int64
	switch v := req.Params.ProgressToken.(type) {
	case float64: // a JSON number, decoded into any
		tok = int64(v)
	case int64:
		tok = v
	case json.Number:
		tok, _ = v.Int64()
	default:
		return
	}
	v, ok := c.progressTo.Load(tok)
	if !ok {
		return
	}
	r := v.(progressRoute)
	p := *req.Params
	p.ProgressToken = nil // the relay's receiver sets its own client's token
	r.to(ctx, &p)
	select {
	case r.handled <- struct{}{}:
	default:
	}
}

// progressRoute is where a relayed call's progress goes, and the signal
// that one was passed on.
type progressRoute struct {
	to      func(context.Context, *mcp.ProgressNotificationParams)
	handled chan struct{}
}

// settleProgress waits, after a result, while progress read before it is
// still being passed on (a notification every progressQuiet at least,
// progressSettle at most), so that the client gets it before the result.
func settleProgress(handled <-chan struct{}) {
	end := time.NewTimer(progressSettle)
	defer end.Stop()
	for {
		quiet := time.NewTimer(progressQuiet)
		select {
		case <-handled:
			quiet.Stop()
		case <-quiet.C:
			return
		case <-end.C:
			quiet.Stop()
			return
		}
	}
}

// Bounds of settleProgress.
const (
	progressQuiet  = 10 * time.Millisecond
	progressSettle = 250 * time.Millisecond
)

// callContext is ctx bounded by the server's own timeout, when it has one.
func (c *Conn) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.srv.Timeout > 0 {
		return context.WithTimeout(ctx, c.srv.Timeout)
	}
	return ctx, func() {}
}

// callFailed classifies what every request to the server can fail with:
// the caller's end or the server's timeout (the go-sdk sent
// notifications/cancelled; a stdio server that does not answer a ping
// within the grace period after it is hung, and is killed and restarted),
// or a JSON-RPC error. ok is false for anything else, which the caller
// classifies.
func (c *Conn) callFailed(ctx, callCtx context.Context, l *link, err error) (_ error, ok bool) {
	if callCtx.Err() != nil {
		go c.checkAfterCancel(l)
		if ctx.Err() == nil {
			return &pipeline.Timeout{Budget: c.srv.Timeout}, true
		}
		return ctx.Err(), true
	}
	var we *jsonrpc.Error
	// -32005 is the go-sdk's "rejected by transport": over HTTP, a request
	// that did not reach the server (its connection refused or reset), so
	// the connection is what failed, not the request (broken says so).
	if errors.As(err, &we) && we.Code != codeRejectedByTransport {
		return pipeline.Reject("mcp_error", fmt.Sprintf("%s (code %d)", we.Message, we.Code)), true
	}
	return nil, false
}

// codeRejectedByTransport is the go-sdk's jsonrpc2.ErrRejected (internal).
const codeRejectedByTransport = -32005

// encodeResult is a server's result as JSON, within max_response_bytes.
func (c *Conn) encodeResult(v any) (json.RawMessage, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, pipeline.Reject("mcp_error", "the server's result does not encode as JSON: "+err.Error())
	}
	if max := c.srv.maxResponse(); len(out) > max {
		return nil, pipeline.Reject("response_too_large", fmt.Sprintf("the server's result is %d bytes, over max_response_bytes (%d): ask for less, or raise mcp.servers.%s.max_response_bytes in airs.yaml", len(out), max, c.srv.Name))
	}
	return out, nil
}

// broken classifies a call whose connection ended under it, takes the
// link out of service and starts a restart.
func (c *Conn) broken(l *link, err error) error {
	s := c.srv
	if (l.lim != nil && l.lim.tripped.Load()) || (l.http != nil && l.http.tripped.Swap(false)) {
		c.lost(l, "a message over max_message_bytes")
		return pipeline.Reject("message_too_large", fmt.Sprintf("the server sent a message over max_message_bytes (%d); the connection was closed and the server restarted: raise mcp.servers.%s.max_message_bytes in airs.yaml if such answers are expected", s.maxMessage(), s.Name))
	}
	var why string
	if l.lim != nil && !l.lim.peerEnded() {
		// The read side ended before the server closed its stdout: what it
		// sent did not decode as JSON-RPC.
		why = "the server broke the protocol: it sent a message that is not JSON-RPC (" + err.Error() + "); the connection broke and the server was killed"
		c.Kills.Add(1)
	} else if l.proc != nil && l.proc.hasExited(time.Second) {
		why = "its process " + l.proc.exitText() + " during the call"
	} else {
		why = "the connection broke during the call (" + err.Error() + ")"
		if l.proc != nil {
			why += "; the server was killed"
			c.Kills.Add(1)
		}
	}
	c.lost(l, why)
	return &pipeline.ProviderCrashed{Provider: c.id, Panic: why}
}

// checkAfterCancel pings a stdio server after a cancelled call: one that
// does not answer within the grace period is killed and restarted.
func (c *Conn) checkAfterCancel(l *link) {
	if l.proc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.grace())
	defer cancel()
	if err := l.sess.Ping(ctx, nil); err != nil {
		c.Kills.Add(1)
		c.lost(l, fmt.Sprintf("it did not answer a ping within %v of a cancelled call", c.srv.grace()))
	}
}

// contentText joins a result's text content (an error result's message).
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, ct := range cs {
		if t, ok := ct.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(cs)
		return string(b)
	}
	return strings.Join(parts, "\n")
}

// ServerInfo is what the server said of itself in initialize ("" while it
// is down).
func (c *Conn) ServerInfo() (name, version string) {
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if l == nil {
		return "", ""
	}
	if r := l.sess.InitializeResult(); r != nil && r.ServerInfo != nil {
		return r.ServerInfo.Name, r.ServerInfo.Version
	}
	return "", ""
}

// Server is the server's description as connected.
func (c *Conn) Server() Server { return c.srv }

// PID is the stdio server's process id (0 while down, or for HTTP).
func (c *Conn) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil || c.cur.proc == nil {
		return 0
	}
	return c.cur.proc.cmd.Process.Pid
}
