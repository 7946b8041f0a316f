//go:build unix

package client

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airs-dev/airs/mcp/client/mcptest"
	"github.com/airs-dev/airs/pipeline"
)

// holdDestructive is the guard's rule in small: a destructive call waits
// for a person (the pipeline's intent_verification_required, 428 over HTTP).
type holdDestructive struct{}

func (holdDestructive) Gate(_ context.Context, c pipeline.IntentCheck) (pipeline.IntentDecision, error) {
	if c.Tool.Destructive {
		return pipeline.IntentDecision{}, &pipeline.IntentVerificationRequired{ID: "held-" + c.CallID}
	}
	return pipeline.IntentDecision{}, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestServerCannotLiftTheGuard: a tool listed without hints is held; the
// server lists it again as read-only with another description and sends
// list_changed: the tool stays held, with the description that was
// granted, the change is logged and shown, and only a person's accepting
// it lifts the hold.
func TestServerCannotLiftTheGuard(t *testing.T) {
	pins := FilePins(filepath.Join(t.TempDir(), "pins.json"))
	var logs syncBuffer
	h := mustStart(t, func(s *Server) { s.Pins = pins; s.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	m, err := pipeline.NewManager(pipeline.Config{Registry: h.reg, Gate: holdDestructive{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	call := func() error {
		_, err := m.Call(context.Background(), pipeline.Request{Tool: "h.chameleon", Params: []byte(`{"path":"/etc/passwd"}`), Caller: "u", Timeout: 10 * time.Second})
		return err
	}
	wantHeld := func(when string) {
		t.Helper()
		if err := call(); pipeline.KindOf(err) != pipeline.KindIntentVerificationRequired {
			t.Fatalf("%s: chameleon not held: %v", when, err)
		}
	}
	wantHeld("as first listed")
	if p, _ := pins.Pins("h"); p["chameleon"].Effect != EffectDestructive || p["chameleon"].By != PinnedFirst || p["echo"].Effect != EffectRead {
		t.Fatalf("first listing's pins: %+v", p)
	}

	if _, err := m.Call(context.Background(), pipeline.Request{Tool: "h.disguise", Params: []byte(`{}`), Caller: "u"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the change was not seen", 5*time.Second, func() bool { return len(h.conn.Changes()) == 1 })
	wantHeld("after it claimed readOnlyHint")
	ch := h.conn.Changes()[0]
	if ch.Tool != "chameleon" || ch.Claimed != EffectRead || ch.Pinned == nil || ch.Pinned.Effect != EffectDestructive || ch.Description != mcptest.ChameleonDisguised {
		t.Fatalf("change = %+v", ch)
	}
	reg, _ := h.reg.Get("mcp:h", "h.chameleon", "")
	if reg.Tool.Description != mcptest.ChameleonHonest || reg.Tool.ReadOnly {
		t.Fatalf("held tool as registered: %+v (want the granted description, not read-only)", reg.Tool)
	}
	// The change is recorded before it is logged: wait for the line.
	logged := func() bool {
		return strings.Contains(logs.String(), "held") && strings.Contains(logs.String(), "pinned destructive, claims read")
	}
	eventually(t, "the change is not logged", 5*time.Second, logged)

	// A person accepts it: now it is what it says.
	if err := h.conn.Accept(context.Background(), "chameleon"); err != nil {
		t.Fatal(err)
	}
	if err := call(); err != nil {
		t.Fatalf("accepted read-only chameleon: %v", err)
	}
	if len(h.conn.Changes()) != 0 {
		t.Fatalf("changes after accept: %+v", h.conn.Changes())
	}
	if p, _ := pins.Pins("h"); p["chameleon"].Effect != EffectRead || p["chameleon"].By != PinnedReview {
		t.Fatalf("accepted pin: %+v", p["chameleon"])
	}
}

// TestPinsOutliveTheProcess: a server that lists a tool otherwise at its
// next start (another process, say) finds it held; airs.yaml's effect is
// used over any hint.
func TestPinsOutliveTheProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	h := mustStart(t, func(s *Server) { s.Pins = FilePins(path) })
	h.conn.Close()
	h2 := mustStart(t, func(s *Server) {
		s.Pins = FilePins(path)
		s.Env = append(s.Env, mcptest.EnvDisguised+"=1")
		s.Effects = map[string]Effect{"echo": EffectWrite}
	})
	reg, _ := h2.reg.Get("mcp:h", "h.chameleon", "")
	if !reg.Tool.Destructive || len(h2.conn.Changes()) != 1 {
		t.Fatalf("chameleon listed read-only at the next start: %+v, changes %+v", reg.Tool, h2.conn.Changes())
	}
	echo, _ := h2.reg.Get("mcp:h", "h.echo", "")
	if echo.Tool.ReadOnly || echo.Tool.Destructive {
		t.Fatalf("echo with effect write configured: %+v", echo.Tool)
	}
	// The file is JSON a person can read.
	var f struct {
		Servers map[string]map[string]Pin `json:"servers"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Servers["h"]["chameleon"].Effect != EffectDestructive {
		t.Fatalf("pins.json: %v %+v", err, f)
	}
}

// TestAcceptedElsewhereIsFollowed: a person accepts a held tool from
// another process (airs tools review --accept beside airs serve): the
// Conn that holds it follows the pin store.
func TestAcceptedElsewhereIsFollowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	first := mustStart(t, func(s *Server) { s.Pins = FilePins(path) })
	first.conn.Close()
	disguised := func(s *Server) {
		s.Pins = FilePins(path)
		s.Env = append(s.Env, mcptest.EnvDisguised+"=1")
		s.PinPoll = 20 * time.Millisecond
	}
	serving, reviewing := mustStart(t, disguised), mustStart(t, disguised)
	if len(serving.conn.Changes()) != 1 {
		t.Fatalf("changes = %+v", serving.conn.Changes())
	}
	if err := reviewing.conn.Accept(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the serving Conn did not follow the acceptance", 5*time.Second, func() bool {
		reg, _ := serving.reg.Get("mcp:h", "h.chameleon", "")
		return reg.Tool.ReadOnly && len(serving.conn.Changes()) == 0
	})
}

// TestConfiguredEffectIgnoresHints: a tool whose effect airs.yaml states
// is not held for other hints, only for another description.
func TestConfiguredEffectIgnoresHints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pins.json")
	h := mustStart(t, func(s *Server) { s.Pins = FilePins(path) })
	h.conn.Close()
	// Same description, other hints: a read-only chameleon is what the
	// configuration says, not held.
	if err := FilePins(path).Update("h", map[string]Pin{"chameleon": {Effect: EffectDestructive, Description: mcptest.ChameleonDisguised, Fingerprint: "before"}}); err != nil {
		t.Fatal(err)
	}
	h2 := mustStart(t, func(s *Server) {
		s.Pins = FilePins(path)
		s.Env = append(s.Env, mcptest.EnvDisguised+"=1")
		s.Effects = map[string]Effect{"chameleon": EffectWrite}
	})
	reg, _ := h2.reg.Get("mcp:h", "h.chameleon", "")
	if len(h2.conn.Changes()) != 0 || reg.Tool.ReadOnly || reg.Tool.Destructive {
		t.Fatalf("configured write, same description: %+v, changes %+v", reg.Tool, h2.conn.Changes())
	}
	h2.conn.Close()
	// Another description: held, configured or not.
	FilePins(path).Update("h", map[string]Pin{"chameleon": {Effect: EffectDestructive, Description: mcptest.ChameleonHonest, Fingerprint: "before"}})
	h3 := mustStart(t, func(s *Server) {
		s.Pins = FilePins(path)
		s.Env = append(s.Env, mcptest.EnvDisguised+"=1")
		s.Effects = map[string]Effect{"chameleon": EffectWrite}
	})
	if reg, _ := h3.reg.Get("mcp:h", "h.chameleon", ""); len(h3.conn.Changes()) != 1 || !reg.Tool.Destructive {
		t.Fatalf("configured write, other description: %+v, changes %+v", reg.Tool, h3.conn.Changes())
	}
}
