package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChainsDefaultIsEmbedded(t *testing.T) {
	home := isolate(t)
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte("spaces: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Chains.Engine != ChainsEmbedded {
		t.Fatalf("default chains engine = %q, want %q", c.Chains.Engine, ChainsEmbedded)
	}
}

func TestChainsTemporal(t *testing.T) {
	home := isolate(t)
	t.Setenv("TEST_TEMPORAL", "10.0.0.9:7233")
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte(
		"chains: {engine: temporal, address: '${TEST_TEMPORAL}', namespace: prod, task_queue: q1, heartbeat_timeout: 3s, max_attempts: 2, ledger_dir: led}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := Chains{Engine: ChainsTemporal, Address: "10.0.0.9:7233", Namespace: "prod", TaskQueue: "q1",
		HeartbeatTimeout: 3 * time.Second, MaxAttempts: 2, LedgerDir: filepath.Join(home, "led")}
	if c.Chains != want {
		t.Fatalf("chains = %+v, want %+v", c.Chains, want)
	}
}

func TestChainsProblems(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"chains:\n  engine: kafka\n", `airs.yaml:2: chains.engine "kafka": want embedded`},
		{"chains:\n  address: nohost\n", `airs.yaml:2: chains.address "nohost"`},
		{"chains:\n  heartbeat_timeout: 10ms\n", "airs.yaml:2: chains.heartbeat_timeout 10ms: at least 1s"},
		{"chains:\n  max_attempts: 0\n", "airs.yaml:2: chains.max_attempts 0: at least 1"},
	} {
		home := isolate(t)
		_, err := Parse(filepath.Join(home, "airs.yaml"), []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
