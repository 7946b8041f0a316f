package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// isolate points every location the package reads at temp dirs.
func isolate(t *testing.T) (home string) {
	t.Helper()
	home = t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	t.Setenv("AIRS_HOME", "")
	t.Setenv("AIRS_CONFIG", "")
	t.Setenv("OLLAMA_HOST", "")
	return home
}

func write(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDefaultsWithoutFile(t *testing.T) {
	home := isolate(t)
	wd := t.TempDir()
	t.Chdir(wd)
	os.Mkdir(filepath.Join(home, "Documents"), 0o755)

	c, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "" {
		t.Errorf("File = %q", c.File)
	}
	if want := filepath.Join(home, ".local", "share", "airs"); c.Home != want {
		t.Errorf("Home = %q, want %q", c.Home, want)
	}
	if c.Spaces["cwd"] != wd || c.Spaces["documents"] != filepath.Join(home, "Documents") || len(c.Spaces) != 2 {
		t.Errorf("Spaces = %v", c.Spaces)
	}
	agent, err := c.CLIAgent("anyone")
	if err != nil || agent != DefaultAgent {
		t.Fatalf("CLIAgent = %q, %v", agent, err)
	}
	if a := c.Agents[agent]; !slices.Equal(a.Capabilities, []Capability{{"ReadSpace", "*"}, {"Network", "*"}}) || !slices.Equal(a.Providers, []string{"*"}) {
		t.Errorf("default agent %+v, want ReadSpace(*), Network(*) and every provider", a)
	}
	if _, ok := c.Agents["someone-else"]; ok {
		t.Error("an unknown agent is configured")
	}
	if c.Breaker.Failures != 5 || c.Breaker.Window != 30*time.Second || c.MaxPayload != DefaultMaxPayload {
		t.Errorf("breaker %+v payload %d", c.Breaker, c.MaxPayload)
	}
	if want := (CallerTimeouts{Timeouts: 5, Window: 30 * time.Second, Cooldown: 10 * time.Second}); c.CallerTimeouts != want {
		t.Errorf("caller_timeouts %+v, want the documented defaults %+v", c.CallerTimeouts, want)
	}
	if c.MaxSteps != DefaultMaxSteps || DefaultMaxSteps != 5 {
		t.Errorf("max_steps %d, want the default 5", c.MaxSteps)
	}
	if c.Ollama.Host != DefaultOllamaHost || c.Ollama.Model != "" || c.HTTP.Listen != DefaultListen || len(c.HTTP.Tokens) != 0 {
		t.Errorf("ollama %+v http %+v", c.Ollama, c.HTTP)
	}
	if c.AuditPath() != filepath.Join(c.Home, "audit.jsonl") || c.Recording.Enabled || c.Recording.Dir != filepath.Join(c.Home, "sessions") {
		t.Errorf("audit %s recording %+v", c.AuditPath(), c.Recording)
	}
	if err := c.EnsureHome(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(c.Home); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("home: %v %v", st, err)
	}
}

func TestLookupOrder(t *testing.T) {
	home := isolate(t)
	def := write(t, filepath.Join(home, ".config", "airs", "airs.yaml"), "ollama: {model: from-default}\n")
	env := write(t, filepath.Join(home, "env.yaml"), "ollama: {model: from-env}\n")
	flag := write(t, filepath.Join(home, "flag.yaml"), "ollama: {model: from-flag}\n")

	model := func(flagValue string) string {
		t.Helper()
		c, err := Load(flagValue)
		if err != nil {
			t.Fatal(err)
		}
		return c.Ollama.Model
	}
	if got := model(""); got != "from-default" {
		t.Errorf("default file: %q", got)
	}
	t.Setenv("AIRS_CONFIG", env)
	if got := model(""); got != "from-env" {
		t.Errorf("AIRS_CONFIG: %q", got)
	}
	if got := model(flag); got != "from-flag" {
		t.Errorf("--config: %q", got)
	}
	// A file named explicitly must exist.
	if _, err := Load(filepath.Join(home, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing explicit file: %v", err)
	}
	_ = def

	// Home: $AIRS_HOME beats home: in the file, which beats the default.
	f := write(t, filepath.Join(home, "h.yaml"), "home: state\n")
	c, _ := Load(f)
	if c.Home != filepath.Join(home, "state") {
		t.Errorf("home from file: %q", c.Home)
	}
	t.Setenv("AIRS_HOME", filepath.Join(home, "envhome"))
	c, _ = Load(f)
	if c.Home != filepath.Join(home, "envhome") {
		t.Errorf("home from env: %q", c.Home)
	}
}

func TestFullFile(t *testing.T) {
	home := isolate(t)
	dir := filepath.Join(home, "cfg")
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	os.MkdirAll(filepath.Join(dir, "shared"), 0o755)
	write(t, filepath.Join(dir, "tools", "a.yaml"), "provider: x\ntools: []\n")
	write(t, filepath.Join(dir, "tools", "b.yaml"), "provider: y\ntools: []\n")
	t.Setenv("TEAM", "shared")
	token := "s3cret-token"
	f := write(t, filepath.Join(dir, "airs.yaml"), `
home: ~/airs-state
spaces:
  documents: ~/Documents
  team: ./${TEAM}
agents:
  alice:
    capabilities: ["ReadSpace(documents)", "Network(*)"]
  web-ui:
    capabilities: [ReadSpace(team)]
    providers: [builtin]
    rate_limit: {per_second: 2.5}
cli:
  users:
    alice: alice
    "*": web-ui
http:
  listen: 127.0.0.1:9999
  tokens:
    - sha256: `+HashToken(token)+`
      agent: web-ui
breaker: {failures: 3, window: 10s, cooldown: 1m}
caller_timeouts: {timeouts: 2, window: 1m}
rate_limit: {per_second: 100, burst: 200}
max_payload: 65536
max_steps: 3
manifests: ["tools/*.yaml"]
ollama: {host: "localhost:11500", model: qwen2.5:0.5b, embed_model: nomic-embed-text}
recording: {enabled: true, redact: [SSN, password]}
`)
	c, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if c.File != f || c.Home != filepath.Join(home, "airs-state") {
		t.Errorf("file %q home %q", c.File, c.Home)
	}
	if c.Spaces["documents"] != filepath.Join(home, "Documents") || c.Spaces["team"] != filepath.Join(dir, "shared") || len(c.Spaces) != 2 {
		t.Errorf("spaces %v", c.Spaces)
	}
	if a, _ := c.CLIAgent("alice"); a != "alice" {
		t.Errorf("alice → %q", a)
	}
	if a, _ := c.CLIAgent("mallory"); a != "web-ui" {
		t.Errorf("mallory → %q", a)
	}
	if al := c.Agents["alice"]; !slices.Contains(al.Capabilities, Capability{"Network", "*"}) ||
		slices.Contains(al.Capabilities, Capability{"ReadSpace", "team"}) ||
		!slices.Equal(al.Providers, []string{"*"}) || !slices.Equal(c.Agents["web-ui"].Providers, []string{"builtin"}) {
		t.Errorf("agents %+v", c.Agents)
	}
	if a, ok := c.AgentForToken(token); !ok || a != "web-ui" {
		t.Errorf("token → %q %v", a, ok)
	}
	if _, ok := c.AgentForToken("wrong"); ok {
		t.Error("wrong token accepted")
	}
	if c.HTTP.Listen != "127.0.0.1:9999" {
		t.Errorf("listen %q", c.HTTP.Listen)
	}
	if c.Breaker != (Breaker{Failures: 3, Window: 10 * time.Second, Cooldown: time.Minute}) {
		t.Errorf("breaker %+v", c.Breaker)
	}
	if c.MaxSteps != 3 {
		t.Errorf("max_steps %d, want 3", c.MaxSteps)
	}
	if want := (CallerTimeouts{Timeouts: 2, Window: time.Minute, Cooldown: 10 * time.Second}); c.CallerTimeouts != want {
		t.Errorf("caller_timeouts %+v, want %+v", c.CallerTimeouts, want)
	}
	if r := c.Agents["web-ui"].RateLimit; c.RateLimit != (RateLimit{PerSecond: 100, Burst: 200}) || r == nil || *r != (RateLimit{PerSecond: 2.5, Burst: 3}) || c.MaxPayload != 65536 {
		t.Errorf("rate limit %+v, web-ui's %+v, payload %d", c.RateLimit, r, c.MaxPayload)
	}
	if want := []string{filepath.Join(dir, "tools", "a.yaml"), filepath.Join(dir, "tools", "b.yaml")}; !slices.Equal(c.Manifests, want) {
		t.Errorf("manifests %v", c.Manifests)
	}
	if c.Ollama != (Ollama{Host: "http://localhost:11500", Model: "qwen2.5:0.5b", EmbedModel: "nomic-embed-text"}) {
		t.Errorf("ollama %+v", c.Ollama)
	}
	if !c.Recording.Enabled || !slices.Contains(c.Recording.Redact, "ssn") || !slices.Contains(c.Recording.Redact, "api_key") {
		t.Errorf("recording %+v", c.Recording)
	}
}

// Every mistake is reported with file:line and what to do.
func TestValidationErrors(t *testing.T) {
	home := isolate(t)
	os.MkdirAll(filepath.Join(home, "docs"), 0o755)
	write(t, filepath.Join(home, "afile"), "x")
	cases := []struct {
		name, yaml string
		want       []string // substrings, each must appear in the error
	}{
		{"unknown key", "spaces:\n  docs: ~/docs\nspacez: {}\n", []string{"airs.yaml:3: unknown key \"spacez\""}},
		{"nested unknown key", "ollama:\n  hots: x\n", []string{"airs.yaml:2: unknown key \"hots\""}},
		{"wrong type", "max_payload: lots\n", []string{"airs.yaml:1: wrong type"}},
		{"bad yaml", "spaces: [\n", []string{"airs.yaml:"}},
		{"missing space dir", "spaces:\n  docs: ~/docs\n  gone: ~/nope\n", []string{"airs.yaml:3: space gone: directory " + filepath.Join(home, "nope") + " does not exist"}},
		{"space is a file", "spaces:\n  f: ~/afile\n", []string{"airs.yaml:2: space f:", "is not a directory"}},
		{"bad space name", "spaces:\n  \"a b\": ~/docs\n", []string{"airs.yaml:2: space name \"a b\""}},
		{"bad capability", "agents:\n  a:\n    capabilities:\n      - ReadSpace(docs\n", []string{"airs.yaml:4: agents.a.capabilities[0]", "Kind(arg)"}},
		{"capability names no space", "spaces: {docs: ~/docs}\nagents:\n  a:\n    capabilities: [ReadSpace(nope)]\n", []string{"airs.yaml:4: agents.a: ReadSpace(nope) names no configured space"}},
		{"cli user to unknown agent", "agents: {a: {}}\ncli:\n  users:\n    bob: b\n", []string{"airs.yaml:4: cli.users.bob: agent \"b\" is not defined"}},
		{"plaintext token", "agents: {a: {}}\nhttp:\n  tokens:\n    - sha256: hunter2\n      agent: a\n", []string{"airs.yaml:4: http.tokens[0].sha256", "never the token itself"}},
		{"token for unknown agent", "http:\n  tokens:\n    - sha256: " + HashToken("t") + "\n      agent: ghost\n", []string{"airs.yaml:3: http.tokens[0].agent: \"ghost\""}},
		{"bad duration", "breaker:\n  window: 30x\n", []string{"airs.yaml:2:", "\"30x\" is not a duration"}},
		{"zero failures", "breaker:\n  failures: 0\n", []string{"airs.yaml:2: breaker.failures"}},
		{"zero caller timeouts", "caller_timeouts:\n  timeouts: 0\n", []string{"airs.yaml:2: caller_timeouts.timeouts", "-1"}},
		{"negative caller cooldown", "caller_timeouts: {cooldown: -1s}\n", []string{"airs.yaml:1: caller_timeouts", "must not be negative"}},
		{"negative rate", "rate_limit:\n  per_second: -1\n", []string{"airs.yaml:1: rate_limit.per_second"}},
		{"missing manifest", "manifests:\n  - tools/x.yaml\n", []string{"airs.yaml:2: manifests[0]:", "does not exist"}},
		{"bad ollama host", "ollama:\n  host: ftp://x\n", []string{"airs.yaml:2: ollama.host", "not http or https"}},
		{"bad listen", "http:\n  listen: localhost\n", []string{"airs.yaml:2: http.listen"}},
		{"zero max_steps", "max_payload: 10\nmax_steps: 0\n", []string{"airs.yaml:2: max_steps", "1 to 50"}},
		{"huge max_steps", "max_steps: 51\n", []string{"airs.yaml:1: max_steps"}},
		{"several at once", "spaces:\n  gone: ~/nope\nbreaker:\n  failures: -5\n", []string{"airs.yaml:2:", "airs.yaml:4:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := write(t, filepath.Join(t.TempDir(), "airs.yaml"), c.yaml)
			_, err := Load(f)
			if err == nil {
				t.Fatalf("no error for:\n%s", c.yaml)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not *config.Error", err, err)
			}
			msg := strings.ReplaceAll(err.Error(), filepath.Dir(f)+string(filepath.Separator), "")
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
		})
	}
}

func TestCLIAgentWithoutMapping(t *testing.T) {
	isolate(t)
	f := write(t, filepath.Join(t.TempDir(), "airs.yaml"), "agents:\n  alice: {}\n")
	c, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := c.CLIAgent("alice"); err != nil || a != "alice" {
		t.Errorf("alice: %q %v", a, err)
	}
	if _, err := c.CLIAgent("bob"); err == nil || !strings.Contains(err.Error(), "cli.users") {
		t.Errorf("bob: %v", err)
	}
}

func TestEmptySpacesMeansNone(t *testing.T) {
	isolate(t)
	f := write(t, filepath.Join(t.TempDir(), "airs.yaml"), "spaces: {}\n")
	c, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Spaces) != 0 {
		t.Errorf("spaces %v", c.Spaces)
	}
}

func TestExampleParses(t *testing.T) {
	home := isolate(t)
	os.MkdirAll(filepath.Join(home, "Documents"), 0o755)
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte(Example))
	if err != nil {
		t.Fatal(err)
	}
	if c.Spaces["documents"] == "" || len(c.Agents) != 2 || len(c.HTTP.Tokens) != 1 || c.MaxSteps != DefaultMaxSteps {
		t.Errorf("%+v", c)
	}
}

func TestRecommendSection(t *testing.T) {
	c, err := Parse("airs.yaml", []byte("home: /tmp/h\nrecommend:\n  enabled: false\n  ttl: 2m\n  per_minute: 30\n  threshold: 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Recommend.Enabled || !c.Recommend.Watch || c.Recommend.TTL != 2*time.Minute || c.Recommend.PerMinute != 30 || c.Recommend.Threshold != 0.5 {
		t.Fatalf("%+v", c.Recommend)
	}
	d, err := Parse("", nil)
	if err != nil || !d.Recommend.Enabled || d.Recommend.TTL != 0 {
		t.Fatalf("defaults %+v %v", d.Recommend, err)
	}
	_, err = Parse("airs.yaml", []byte("recommend:\n  per_minute: 0\n  threshold: 2\n  ttl: -1s\n"))
	for _, want := range []string{"recommend.per_minute 0", "recommend.threshold 2", "recommend.ttl -1s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

func TestGuardSection(t *testing.T) {
	d, err := Parse("", nil)
	if err != nil || !d.Guard.Enabled || d.Guard.Expiry != 0 || d.Guard.ReviewTools != nil || d.Guard.Reviewers != nil {
		t.Fatalf("defaults: %+v %v", d.Guard, err)
	}
	c, err := Parse("airs.yaml", []byte("home: /tmp/h\nagents:\n  boss: {}\n  bot: {}\nguard:\n  review_tools: [read-file, pdf-extract]\n  reviewers: [boss]\n  expiry: 5m\n  max_pending: 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := c.Guard; !g.Enabled || strings.Join(g.ReviewTools, ",") != "read-file,pdf-extract" || strings.Join(g.Reviewers, ",") != "boss" || g.Expiry != 5*time.Minute || g.MaxPending != 10 {
		t.Fatalf("guard: %+v", g)
	}
	if c.GuardDir() != filepath.Join("/tmp/h", "guard") {
		t.Errorf("GuardDir %s", c.GuardDir())
	}
	if c, err := Parse("airs.yaml", []byte("guard:\n  enabled: false\n")); err != nil || c.Guard.Enabled {
		t.Fatalf("enabled false: %+v %v", c, err)
	}
	_, err = Parse("airs.yaml", []byte("agents:\n  bot: {}\nguard:\n  review_tools: [read-file, 'rm -rf', read-file]\n  reviewers: [nobody]\n  expiry: 48h\n  max_pending: 0\n"))
	for _, want := range []string{
		`airs.yaml:4: guard.review_tools[1]: "rm -rf" is not a tool name`,
		"airs.yaml:4: guard.review_tools[2]: read-file is listed twice",
		`airs.yaml:5: guard.reviewers[0]: agent "nobody" is not defined under agents (defined: bot)`,
		"airs.yaml:6: guard.expiry 48h0m0s: want a duration above 0 and at most 24h0m0s",
		"airs.yaml:7: guard.max_pending 0: must be at least 1",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
	if _, err := Parse("airs.yaml", []byte("guard:\n  expiry: 0s\n")); err == nil {
		t.Error("expiry 0s accepted")
	}
}

func TestGuardAnomalySection(t *testing.T) {
	t.Setenv("AIRS_HOME", "")
	d, err := Parse("airs.yaml", []byte("home: /tmp/h\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := d.Guard.Anomaly; a.Model != "/tmp/h/guard/anomaly.model" || a.ModelSet || a.Warn != 0.8 || a.Review != 0.9 || a.Block != 0.95 || a.Candidate != "" {
		t.Fatalf("defaults %+v", a)
	}
	c, err := Parse("/etc/airs/airs.yaml", []byte("home: /tmp/h\nagents:\n  bot: {trust: 2}\nguard:\n  anomaly:\n    model: m/a.model\n    warn: 0.7\n    review: 0.85\n    block: 0.99\n    candidate: b.model\n    candidate_share: 0.25\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Guard.Anomaly
	if a.Model != "/etc/airs/m/a.model" || !a.ModelSet || a.Warn != 0.7 || a.Review != 0.85 || a.Block != 0.99 ||
		a.Candidate != "/etc/airs/b.model" || a.CandidateShare != 0.25 || c.TrustLevels()["bot"] != 2 {
		t.Fatalf("%+v trust %v", a, c.TrustLevels())
	}
	_, err = Parse("airs.yaml", []byte("agents:\n  bot: {trust: 7}\nguard:\n  anomaly:\n    warn: 0.95\n    block: 0.9\n    review: 1.5\n    candidate_share: 0.5\n"))
	for _, want := range []string{"agents.bot.trust 7", "guard.anomaly.review 1.5", "must not decrease", "candidate_share without a candidate"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}

// latency: turns prediction and the would_timeout advisory off; both are
// on by default.
func TestLatencySection(t *testing.T) {
	d, err := Parse("", nil)
	if err != nil || d.Latency.Off || d.Latency.NoWouldTimeout {
		t.Fatalf("defaults: %+v %v", d.Latency, err)
	}
	c, err := Parse("airs.yaml", []byte("latency: {enabled: false, would_timeout: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if l := c.Latency; !l.Off || !l.NoWouldTimeout {
		t.Fatalf("latency: %+v", l)
	}
	c, err = Parse("airs.yaml", []byte("latency:\n  would_timeout: false\n"))
	if err != nil || c.Latency.Off || !c.Latency.NoWouldTimeout {
		t.Fatalf("would_timeout only: %+v %v", c.Latency, err)
	}
}
