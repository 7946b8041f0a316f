package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/engine/enginetest"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// peerB is AIRS instance B, configured with peers: naming A's /mcp at
// url, alice granted and bob not; it connects as airs does (StartMCP).
func peerB(t *testing.T, url, tokenEnv string) (*engine.MCP, *engine.Engine) {
	t.Helper()
	dir := t.TempDir()
	yaml := fmt.Sprintf(`home: ./state
agents:
  alice: {capabilities: []}
  bob: {capabilities: ["ReadSpace(*)", "Network(*)"]}
peers:
  - {name: lab, url: %q, token: "${%s}", grant: [alice]}
`, url, tokenEnv)
	cfg := enginetest.WriteConfig(t, dir, yaml)
	policy := settings.Policy(cfg)
	reg, err := engine.Registry(cfg, policy)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mcp := engine.StartMCP(ctx, cfg, reg, nil, "test")
	t.Cleanup(func() { mcp.Close() })
	log, err := audit.Open(cfg.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	mc := settings.ManagerConfig(cfg)
	mc.Registry, mc.Policy, mc.Audit = reg, policy, log
	m, err := pipeline.NewManager(mc)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, cfg, reg, m, policy, engine.Options{Channel: "run", Model: "none", MCP: mcp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); m.Close(); log.Close() })
	return mcp, e
}

// auditRecords reads an audit log's records.
func auditRecords(t *testing.T, path string) []audit.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []audit.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r audit.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// TestPeerThroughAnotherAIRS: instance A serves /mcp (the real server,
// bearer tokens, its own grants); B lists A as a peer. A call on B to
// peer.lab.calculator runs on A, as the agent A maps B's token to, and
// A's audit log has it; bob, not granted MCP(peer.lab) on B, is refused on
// B before anything reaches A; a wrong token and a peer that is down are
// errors that say what to do.
func TestPeerThroughAnotherAIRS(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	base, cfgA, _ := newServedEngineWith(t, servedOptions{mcp: true})
	// A proxy in front of A, so the test can take A off the network.
	target, _ := url.Parse(base)
	proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer proxy.Close()
	t.Setenv("LAB_TOKEN", "t-web") // A maps it to agent web

	mcp, e := peerB(t, proxy.URL+"/mcp", "LAB_TOKEN")
	if ps := mcp.Problems(); len(ps) != 0 {
		t.Fatalf("problems: %v", ps)
	}
	c := mcp.Conn("peer.lab")
	if c == nil {
		t.Fatal("peer lab not connected")
	}
	names := map[string]bool{}
	for _, tl := range c.Tools() {
		names[tl.Name] = true
		if !strings.HasPrefix(tl.Name, "peer.lab.") {
			t.Errorf("tool %s is not namespaced peer.lab.", tl.Name)
		}
	}
	if !names["peer.lab.calculator"] {
		t.Fatalf("A's calculator is not among B's peer tools: %v", names)
	}

	ctx := context.Background()
	before := len(auditRecords(t, cfgA.AuditPath()))
	res, err := e.Call(ctx, pipeline.Request{Tool: "peer.lab.calculator", Params: []byte(`{"expression":"(12.5 + 7) * 3"}`), Caller: "alice"})
	if err != nil {
		t.Fatalf("alice's call through the peer: %v", err)
	}
	if !strings.Contains(string(res.Output), "58.5") {
		t.Fatalf("result %s: want 58.5", res.Output)
	}
	recs := auditRecords(t, cfgA.AuditPath())
	if len(recs) != before+1 {
		t.Fatalf("A's audit log has %d new records, want 1", len(recs)-before)
	}
	if r := recs[len(recs)-1]; r.Tool != "calculator" || r.Caller != "web" || r.Outcome != "ok" {
		t.Fatalf("A's audit record %+v: want calculator by web, ok", r)
	}
	// B's own audit log has the call too, as alice's, to the peer.
	recsB := auditRecords(t, e.Config().AuditPath())
	if r := recsB[len(recsB)-1]; r.Tool != "peer.lab.calculator" || r.Caller != "alice" || r.Provider != "mcp:peer.lab" {
		t.Fatalf("B's audit record %+v", r)
	}

	// Not granted: refused on B, nothing reaches A.
	_, err = e.Call(ctx, pipeline.Request{Tool: "peer.lab.calculator", Params: []byte(`{"expression":"1+1"}`), Caller: "bob"})
	if pipeline.KindOf(err) != pipeline.KindToolCapabilityDenied || !strings.Contains(err.Error(), "MCP(peer.lab)") {
		t.Fatalf("bob's call: %v (want capability denied naming MCP(peer.lab))", err)
	}
	if n := len(auditRecords(t, cfgA.AuditPath())); n != before+1 {
		t.Fatalf("bob's refused call reached A: %d new records", n-before)
	}

	// A goes down: the call fails, saying the peer is unreachable.
	proxy.CloseClientConnections()
	proxy.Close()
	_, err = e.Call(ctx, pipeline.Request{Tool: "peer.lab.calculator", Params: []byte(`{"expression":"2+2"}`), Caller: "alice"})
	if err == nil {
		t.Fatal("a call to a peer that is down succeeded")
	}
	t.Logf("peer down: %v (kind %s)", err, pipeline.KindOf(err))
	if !strings.Contains(err.Error(), "peer.lab") {
		t.Errorf("the error does not name the peer: %v", err)
	}
}

// TestPeerWrongTokenOrDown: B starts with a token A does not know, or with
// A not listening: the peer is a problem naming it, and B runs without it.
func TestPeerWrongTokenOrDown(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	base, _, _ := newServedEngineWith(t, servedOptions{mcp: true})
	t.Setenv("BAD_TOKEN", "not-a-token")
	mcp, _ := peerB(t, base+"/mcp", "BAD_TOKEN")
	ps := mcp.Problems()
	if len(ps) != 1 || mcp.Conn("peer.lab") != nil {
		t.Fatalf("wrong token: problems %v, connected %v", ps, mcp.Conn("peer.lab") != nil)
	}
	t.Logf("wrong token: %v", ps[0])
	if msg := ps[0].Error(); !strings.Contains(msg, "peer.lab") || !strings.Contains(msg, "401") && !strings.Contains(strings.ToLower(msg), "unauthorized") {
		t.Errorf("wrong token's problem does not name the peer and the refusal: %v", msg)
	}

	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String() + "/mcp"
	l.Close()
	t.Setenv("LAB_TOKEN", "t-web")
	mcp, _ = peerB(t, down, "LAB_TOKEN")
	if ps := mcp.Problems(); len(ps) != 1 || !strings.Contains(ps[0].Error(), "peer.lab") {
		t.Fatalf("peer down at start: problems %v", ps)
	} else {
		t.Logf("peer down: %v", ps[0])
	}

	// The token's variable unset: the problem says which to export.
	mcp, _ = peerB(t, base+"/mcp", "UNSET_PEER_TOKEN_VAR")
	if ps := mcp.Problems(); len(ps) != 1 || !strings.Contains(ps[0].Error(), "$UNSET_PEER_TOKEN_VAR") {
		t.Fatalf("unset token: problems %v", ps)
	}
}
