package client

import (
	"context"
	"encoding/json"
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

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
