package config

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Chains chooses the engine that runs chains (chains: in airs.yaml). The
// default runs them in process, as `airs run` always has; Temporal runs
// each chain as a workflow so that it survives the loss of the replica
// running it (chains/temporal, docs/scaling.md "Chains on Temporal").
//
//	chains: {engine: temporal, address: 127.0.0.1:7233, namespace: default, task_queue: airs}
type Chains struct {
	Engine string // ChainsEmbedded or ChainsTemporal
	// Temporal's frontend host:port ($VARs expanded), namespace and the
	// task queue the replicas' workers poll.
	Address, Namespace, TaskQueue string
	// HeartbeatTimeout: how long a running call may go without its
	// worker's heartbeat before it counts as lost.
	HeartbeatTimeout time.Duration
	// MaxAttempts bounds the attempts of an idempotent call whose worker
	// was lost; non-idempotent calls are never repeated.
	MaxAttempts int
	// LedgerDir records the non-idempotent calls as they start; replicas
	// that take over each other's chains should share it.
	LedgerDir string
}

// The engines chains.engine may name.
const (
	ChainsEmbedded = "embedded"
	ChainsTemporal = "temporal"
)

type fileChains struct {
	Engine           string   `yaml:"engine"`
	Address          string   `yaml:"address"`
	Namespace        string   `yaml:"namespace"`
	TaskQueue        string   `yaml:"task_queue"`
	HeartbeatTimeout Duration `yaml:"heartbeat_timeout"`
	MaxAttempts      *int     `yaml:"max_attempts"`
	LedgerDir        string   `yaml:"ledger_dir"`
}

func (p *parser) buildChains(fc *fileConfig, c *Config) {
	f := fc.Chains
	c.Chains = Chains{Engine: ChainsEmbedded, Address: "127.0.0.1:7233", Namespace: "default", TaskQueue: "airs",
		HeartbeatTimeout: 10 * time.Second, MaxAttempts: 5, LedgerDir: filepath.Join(c.Home, "chain-ledger")}
	switch f.Engine {
	case "", ChainsEmbedded:
	case ChainsTemporal:
		c.Chains.Engine = ChainsTemporal
	default:
		p.add(p.line("chains", "engine"), "chains.engine %q: want %s (the default: chains run in process) or %s (each chain a Temporal workflow; see docs/scaling.md)", f.Engine, ChainsEmbedded, ChainsTemporal)
	}
	if f.Address != "" {
		c.Chains.Address = os.ExpandEnv(f.Address)
		if c.Chains.Address == "" || !strings.Contains(c.Chains.Address, ":") {
			p.add(p.line("chains", "address"), "chains.address %q expands to %q: want host:port of the Temporal frontend, e.g. 127.0.0.1:7233", f.Address, c.Chains.Address)
		}
	}
	if f.Namespace != "" {
		c.Chains.Namespace = f.Namespace
	}
	if f.TaskQueue != "" {
		c.Chains.TaskQueue = f.TaskQueue
	}
	if f.HeartbeatTimeout != 0 {
		if f.HeartbeatTimeout < Duration(time.Second) {
			p.add(p.line("chains", "heartbeat_timeout"), "chains.heartbeat_timeout %v: at least 1s (a worker heartbeats every third of it)", time.Duration(f.HeartbeatTimeout))
		} else {
			c.Chains.HeartbeatTimeout = time.Duration(f.HeartbeatTimeout)
		}
	}
	if f.MaxAttempts != nil {
		if *f.MaxAttempts < 1 {
			p.add(p.line("chains", "max_attempts"), "chains.max_attempts %d: at least 1 (1: never retry a call whose worker was lost)", *f.MaxAttempts)
		} else {
			c.Chains.MaxAttempts = *f.MaxAttempts
		}
	}
	if f.LedgerDir != "" {
		c.Chains.LedgerDir = p.expandPath(f.LedgerDir)
	}
}
