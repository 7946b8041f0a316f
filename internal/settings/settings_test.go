package settings

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/scoring"
)

func parse(t *testing.T, yaml string) *config.Config {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, ".local", "share"))
	t.Setenv("AIRS_HOME", "")
	for _, d := range []string{"docs", "team", "Documents"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, err := config.Parse(filepath.Join(dir, "airs.yaml"), []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// An agent's capabilities and providers reach the pipeline's policy with
// their matching rules (Network(*) covers a host; providers limit reach).
func TestPolicy(t *testing.T) {
	c := parse(t, `
spaces: {docs: docs, team: team}
agents:
  alice: {capabilities: [ReadSpace(docs), Network(*)]}
  web-ui: {capabilities: [ReadSpace(team)], providers: [builtin]}
peers:
  - {name: lab, url: "http://10.0.0.2:7777/mcp", token: "${LAB_TOKEN}", grant: [alice]}
`)
	pol := Policy(c)
	if !pol.Holds("alice", pipeline.Capability{Kind: "Network", Arg: "smtp.example.org"}) ||
		pol.Holds("alice", pipeline.Capability{Kind: "ReadSpace", Arg: "team"}) ||
		!pol.CanReach("alice", "anything") || pol.CanReach("web-ui", "other") || !pol.CanReach("web-ui", "builtin") {
		t.Errorf("policy %+v", pol)
	}
	if !pol.Holds("alice", Capability(config.PeerCapability("lab"))) || pol.Holds("web-ui", Capability(config.PeerCapability("lab"))) {
		t.Errorf("a peer's grant: %+v", pol)
	}
	if pol.Holds("someone-else", pipeline.Capability{Kind: "ReadSpace", Arg: "docs"}) {
		t.Error("an unknown agent holds ReadSpace(docs)")
	}
}

// Every configured setting of the Tool Manager reaches pipeline.Config.
func TestManagerConfig(t *testing.T) {
	c := parse(t, `
agents:
  web-ui: {rate_limit: {per_second: 2.5}}
breaker: {failures: 3, window: 10s, cooldown: 1m}
caller_timeouts: {timeouts: 2, window: 1m}
rate_limit: {per_second: 100, burst: 200}
max_payload: 65536
latency: {enabled: false, would_timeout: false}
guard:
  speculation: {enabled: true, max_inflight: 3, per_minute: 12, ttl: 20s, idle_below: 2}
`)
	mc := ManagerConfig(c)
	if mc.Breaker != (pipeline.BreakerConfig{Failures: 3, Window: 10 * time.Second, Cooldown: time.Minute}) {
		t.Errorf("breaker %+v", mc.Breaker)
	}
	if want := (pipeline.CallerTimeoutLimit{Timeouts: 2, Window: time.Minute, Cooldown: 10 * time.Second}); mc.CallerTimeouts != want {
		t.Errorf("caller_timeouts %+v, want %+v", mc.CallerTimeouts, want)
	}
	if mc.RateLimit != (pipeline.RateLimit{PerSecond: 100, Burst: 200}) || mc.RateLimits["web-ui"] != (pipeline.RateLimit{PerSecond: 2.5, Burst: 3}) || mc.MaxPayload != 65536 || mc.Policy == nil {
		t.Errorf("manager config %+v", mc)
	}
	if !mc.Latency.Off || !mc.Latency.NoWouldTimeout {
		t.Errorf("latency %+v", mc.Latency)
	}
	if s := mc.Speculation; !s.Enabled || s.MaxInflight != 3 || s.PerMinute != 12 || s.TTL != 20*time.Second || s.IdleBelow != 2 {
		t.Errorf("speculation %+v", s)
	}
	d := ManagerConfig(parse(t, ""))
	if d.Latency.Off || d.Latency.NoWouldTimeout || d.Speculation.Enabled {
		t.Errorf("defaults: latency %+v speculation %+v", d.Latency, d.Speculation)
	}
}

// config keeps copies of two of the pipeline's and the ranking's values
// (it imports neither); they stay the same.
func TestConfigAgreesWithThePipeline(t *testing.T) {
	if config.DefaultClaimRetention != pipeline.DefaultClaimRetention {
		t.Errorf("config.DefaultClaimRetention %v, pipeline's %v", config.DefaultClaimRetention, pipeline.DefaultClaimRetention)
	}
	c := parse(t, config.Example)
	if w := Weights(c); w == nil || *w != scoring.DefaultWeights {
		t.Errorf("the example's weights %+v, want scoring.DefaultWeights %+v", w, scoring.DefaultWeights)
	}
	if Weights(parse(t, "")) != nil {
		t.Error("no selection.weights gave weights")
	}
	for _, w := range []config.Weights{{}, {Semantic: -1}, {Semantic: 1}} {
		if (w.Validate() == nil) != (scoring.SelectionWeights(w).Validate() == nil) {
			t.Errorf("%+v: config and scoring disagree on validity", w)
		}
	}
}

// A capability converts both ways as written.
func TestCapability(t *testing.T) {
	for _, s := range []string{"ReadSpace(docs)", "Network(*.example.org)", "MCP(peer.lab)", "Admin"} {
		cc, err := config.ParseCapability(s)
		pc, perr := pipeline.ParseCapability(s)
		if err != nil || perr != nil || Capability(cc) != pc || cc.String() != pc.String() {
			t.Errorf("%s: config %+v %v, pipeline %+v %v", s, cc, err, pc, perr)
		}
	}
	for _, s := range []string{"", "(x)", "A(b", "x)"} {
		if _, err := config.ParseCapability(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}
