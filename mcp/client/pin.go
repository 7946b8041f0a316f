package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/pipeline"
)

// An outside server's annotations and descriptions are claims: a server
// that lists a tool without hints (destructive, so each call waits for a
// person) could list it again as readOnlyHint and have its next call run
// unconfirmed. So what a tool may do is pinned: when AIRS first lists a
// server (the configuration, or `airs tools install`'s consent, granted
// it as it was then) or when a person accepts it (`airs tools review
// --accept`), each tool's effect, description and annotations are
// recorded (Pin). A listing that differs from its pin later — other
// hints, another description, or a tool that was not there — is logged,
// shown by review (Conn.Changes), and the tool is held: registered as
// destructive with its reviewed description, so every call waits for a
// person, until someone accepts the change. airs.yaml may state a tool's
// effect outright (Server.Effects); then its hints are not read at all.

// Effect is what a call of a tool may do.
type Effect string

// The effects: a read changes nothing; a write changes something that can
// be had back; a destructive call may remove or overwrite what cannot.
const (
	EffectRead        Effect = "read"
	EffectWrite       Effect = "write"
	EffectDestructive Effect = "destructive"
)

// ParseEffect reads read, write or destructive.
func ParseEffect(s string) (Effect, error) {
	switch e := Effect(s); e {
	case EffectRead, EffectWrite, EffectDestructive:
		return e, nil
	}
	return "", fmt.Errorf("effect %q: want read, write or destructive", s)
}

// EffectOf is the effect the registry's flags describe.
func EffectOf(t pipeline.Tool) Effect {
	switch {
	case t.ReadOnly:
		return EffectRead
	case t.Destructive:
		return EffectDestructive
	}
	return EffectWrite
}

// apply sets t's flags to e (idempotent is kept unless e is a read).
func (e Effect) apply(t *pipeline.Tool) {
	t.ReadOnly, t.Destructive = e == EffectRead, e == EffectDestructive
	if e == EffectRead {
		t.Idempotent = true // reading twice changes nothing
	}
}

// Pin is one tool as it was granted or reviewed.
type Pin struct {
	Effect      Effect               `json:"effect"`
	Idempotent  bool                 `json:"idempotent,omitempty"`
	Description string               `json:"description"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitempty"`
	// Fingerprint is a hash of the description, title and annotations
	// as the server listed them: another listing is another fingerprint.
	Fingerprint string `json:"fingerprint"`
	// By says how it was pinned: PinnedFirst, PinnedReview.
	By string    `json:"by"`
	At time.Time `json:"at"`
}

// How a pin was made.
const (
	PinnedFirst  = "first listing" // as the server was granted
	PinnedReview = "review"        // a person accepted it
)

// fingerprint hashes what a server claims of a tool beside its schema.
func fingerprint(t *mcp.Tool) string {
	b, _ := json.Marshal(struct {
		Title, Description string
		Annotations        *mcp.ToolAnnotations
	}{t.Title, t.Description, t.Annotations})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Change is a tool whose listing differs from its pin, held until a
// person accepts it. Pinned is nil for a tool listed after the server was
// granted.
type Change struct {
	Tool   string // the server's name of it
	Pinned *Pin
	// Listed: what the server says now, and the effect its hints claim.
	Description string
	Annotations *mcp.ToolAnnotations
	Claimed     Effect
}

// PinStore keeps the pins of every server.
type PinStore interface {
	// Pins are server's pins by tool (the server's name of it); none
	// when it was never listed.
	Pins(server string) (map[string]Pin, error)
	// Update sets server's pins of the tools in set, keeping the others.
	Update(server string, set map[string]Pin) error
	// Forget drops every pin of server (it was removed: a server of that
	// name installed later is granted afresh).
	Forget(server string) error
}

// MemoryPins keeps pins for the life of the process (no AIRS_HOME).
func MemoryPins() PinStore { return &memPins{m: map[string]map[string]Pin{}} }

type memPins struct {
	mu sync.Mutex
	m  map[string]map[string]Pin
}

func (p *memPins) Pins(server string) (map[string]Pin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.m[server]), nil
}

func (p *memPins) Update(server string, set map[string]Pin) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m[server] == nil {
		p.m[server] = map[string]Pin{}
	}
	maps.Copy(p.m[server], set)
	return nil
}

func (p *memPins) Forget(server string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, server)
	return nil
}

// FilePins keeps pins in one JSON file (AIRS_HOME/mcp/pins.json), shared
// by every airs process: an update re-reads it under a file lock and
// replaces it whole (a temporary file renamed over it).
func FilePins(path string) PinStore { return &filePins{path: path} }

type filePins struct {
	path string
	mu   sync.Mutex
}

type pinFile struct {
	Servers map[string]map[string]Pin `json:"servers"`
}

func (p *filePins) read() (pinFile, error) {
	f := pinFile{Servers: map[string]map[string]Pin{}}
	b, err := os.ReadFile(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s is damaged (%v): move it aside; every MCP tool is then pinned again as its server lists it now, so review them (`airs tools review NAME`)", p.path, err)
	}
	if f.Servers == nil {
		f.Servers = map[string]map[string]Pin{}
	}
	return f, nil
}

func (p *filePins) Pins(server string) (map[string]Pin, error) {
	f, err := p.read()
	if err != nil {
		return nil, err
	}
	return f.Servers[server], nil
}

func (p *filePins) Update(server string, set map[string]Pin) error {
	return p.change(func(f *pinFile) {
		if f.Servers[server] == nil {
			f.Servers[server] = map[string]Pin{}
		}
		maps.Copy(f.Servers[server], set)
	})
}

func (p *filePins) Forget(server string) error {
	return p.change(func(f *pinFile) { delete(f.Servers, server) })
}

// change applies edit to the file under its lock.
func (p *filePins) change(edit func(*pinFile)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(p.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, err := p.read()
	if err != nil {
		return err
	}
	edit(&f)
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".pins-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p.path)
}

// pinOf is mt as listed now, pinned with its claimed (or configured)
// effect.
func pinOf(mt *mcp.Tool, t pipeline.Tool, by string) Pin {
	return Pin{Effect: EffectOf(t), Idempotent: t.Idempotent, Description: mt.Description, Annotations: mt.Annotations,
		Fingerprint: fingerprint(mt), By: by, At: time.Now().UTC()}
}

// hold makes t a held tool: destructive (each call waits for a person),
// with the description that was reviewed rather than the one the server
// says now.
func hold(t *pipeline.Tool, p *Pin) {
	EffectDestructive.apply(t)
	t.Idempotent = false
	if p != nil {
		t.Description = p.Description
	} else {
		t.Description = "(not reviewed: this tool appeared after its server was granted; `airs tools review` shows it)"
	}
}

// describeChange is a change for the log: what the pin says and what the
// server says now.
func describeChange(c Change) string {
	var b strings.Builder
	if c.Pinned == nil {
		fmt.Fprintf(&b, "new tool, claims %s", c.Claimed)
	} else {
		if c.Pinned.Description != c.Description {
			fmt.Fprintf(&b, "description changed; ")
		}
		fmt.Fprintf(&b, "pinned %s, claims %s", c.Pinned.Effect, c.Claimed)
	}
	return b.String()
}

// pin sets t's effect from its pin (or airs.yaml's), pins a tool of a
// server's first listing, and holds one whose listing differs from its
// pin, adding it to changes.
func (c *Conn) pin(mt *mcp.Tool, t *pipeline.Tool, pins map[string]Pin, firstListing bool, newPins map[string]Pin, changes *[]Change) {
	claimed := EffectOf(*t)
	configured, isConfigured := c.srv.Effects[mt.Name]
	if isConfigured {
		configured.apply(t)
	}
	p, ok := pins[mt.Name]
	// With its effect configured, a tool's hints are not read: only its
	// description can change what was granted.
	same := ok && (p.Fingerprint == fingerprint(mt) || isConfigured && p.Description == mt.Description)
	switch {
	case !ok && firstListing:
		newPins[mt.Name] = pinOf(mt, *t, PinnedFirst)
	case same:
		if !isConfigured {
			p.Effect.apply(t)
			t.Idempotent = p.Idempotent || p.Effect == EffectRead
		}
	default:
		ch := Change{Tool: mt.Name, Description: mt.Description, Annotations: mt.Annotations, Claimed: claimed}
		if ok {
			ch.Pinned = &p
		}
		*changes = append(*changes, ch)
		hold(t, ch.Pinned)
	}
}

// logChanges logs each held tool once per listing of it.
func (c *Conn) logChanges(changes []Change) {
	for _, ch := range changes {
		fp := fingerprint(&mcp.Tool{Description: ch.Description, Annotations: ch.Annotations})
		c.mu.Lock()
		seen := c.loggedFP[ch.Tool] == fp
		c.loggedFP[ch.Tool] = fp
		c.mu.Unlock()
		if !seen {
			c.log.Warn("mcp tool differs from what was granted: held, each call waits for a person, until it is accepted with `airs tools review "+c.srv.Name+" --accept`",
				"tool", ch.Tool, "change", describeChange(ch), "description", ch.Description)
		}
	}
}

// Changes are the tools held because their listing differs from their
// pins, by name.
func (c *Conn) Changes() []Change {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.changes)
}

// Pins are the server's tools' pins as they stand (the store's and this
// Conn's own).
func (c *Conn) Pins() (map[string]Pin, error) {
	pins, err := c.pins.Pins(c.srv.Name)
	if err != nil {
		return nil, err
	}
	pins = maps.Clone(pins)
	if pins == nil {
		pins = map[string]Pin{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, p := range c.ownPins {
		if _, ok := pins[k]; !ok {
			pins[k] = p
		}
	}
	return pins, nil
}

// Accept pins the tools named (none: every tool) as the server lists them
// now, as a person reviewed them, and re-applies the listing: a held tool
// is held no more. The effect pinned is airs.yaml's for the tool, else
// what its hints claim.
func (c *Conn) Accept(ctx context.Context, tools ...string) error {
	c.mu.Lock()
	listed := c.listed
	c.mu.Unlock()
	set := map[string]Pin{}
	for _, mt := range listed {
		if len(tools) > 0 && !slices.Contains(tools, mt.Name) {
			continue
		}
		t, err := ToolFromMCP(c.srv, mt)
		if err != nil {
			continue
		}
		if e, ok := c.srv.Effects[mt.Name]; ok {
			e.apply(&t)
		}
		set[mt.Name] = pinOf(mt, t, PinnedReview)
	}
	for _, n := range tools {
		if _, ok := set[n]; !ok {
			return fmt.Errorf("mcp server %s lists no tool %q: `airs tools review %s` shows its tools", c.srv.Name, n, c.srv.Name)
		}
	}
	if err := c.pins.Update(c.srv.Name, set); err != nil {
		return fmt.Errorf("mcp server %s: saving the accepted pins: %v", c.srv.Name, err)
	}
	c.mu.Lock()
	maps.Copy(c.ownPins, set)
	c.mu.Unlock()
	return c.resync(ctx)
}

// resync lists the tools again and brings the registry in line.
func (c *Conn) resync(ctx context.Context) error {
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	if l == nil {
		return nil // the next connection lists them
	}
	changed, err := c.sync(ctx, l, false)
	if err != nil {
		return err
	}
	if changed {
		c.changed()
	}
	return nil
}

// PinPoll is how often a Conn with held tools reads the pin store again
// (Server.PinPoll's default): a person may accept them from another airs
// process.
const PinPoll = 2 * time.Second

// followPins re-applies the listing once another process accepted a held
// tool (its pin now matches the listing).
func (c *Conn) followPins() {
	t := time.NewTicker(cmp.Or(max(c.srv.PinPoll, 0), PinPoll))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.quit:
			return
		}
		c.mu.Lock()
		changes := c.changes
		c.mu.Unlock()
		if len(changes) == 0 {
			continue
		}
		pins, err := c.pins.Pins(c.srv.Name)
		if err != nil {
			continue
		}
		c.mu.Lock()
		listed := c.listed
		c.mu.Unlock()
		for _, mt := range listed {
			held := slices.ContainsFunc(changes, func(ch Change) bool { return ch.Tool == mt.Name })
			if p, ok := pins[mt.Name]; held && ok && p.Fingerprint == fingerprint(mt) {
				c.mu.Lock()
				c.ownPins[mt.Name] = p
				c.mu.Unlock()
				ctx, cancel := context.WithTimeout(context.Background(), ConnectTimeout)
				if err := c.resync(ctx); err != nil {
					c.log.Warn("mcp server: re-listing its tools after a review failed", "err", err)
				}
				cancel()
				break
			}
		}
	}
}
