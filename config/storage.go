package config

import (
	"net/url"
	"os"
	"strings"
	"time"
)

// Storage chooses where shared state lives (storage: in airs.yaml). The
// default is AIRS_HOME's files, right for one machine; PostgreSQL lets
// several `airs serve` replicas share one state (docs/scaling.md).
type Storage struct {
	// Audit is the audit log's backend: StorageFile ($AIRS_HOME/audit.jsonl)
	// or StoragePostgres (the database at DSN).
	Audit string
	// Index is the tool index's backend: StorageFile (chromem-go under
	// $AIRS_HOME/index) or StoragePostgres (pgvector in the database at
	// DSN, shared by replicas: embedded once, one lexical basis).
	Index string
	// Learned is where the ranker's learned statistics and preferences
	// live: StorageFile ($AIRS_HOME/learned.json) or StoragePostgres (one
	// document every replica merges into, so each ranks with all of their
	// learning). It covers the recommender's learned state too (its
	// answers log, snapshot and task texts): both are what AIRS learned
	// from its users' answers, and a team shares or keeps both.
	Learned string
	// Sessions is where recorded sessions go when recording is on:
	// StorageFile (recording.dir/sessions.jsonl) or StoragePostgres (one
	// table every replica appends to; airs eval replay/tune read it).
	Sessions string
	// Guard is where the guard keeps its reviews, "always" grants and
	// anomaly models: StorageFile ($AIRS_HOME/guard and the model files)
	// or StoragePostgres (a confirmation approved on one replica releases
	// the call on any other; a model trained once scores on all).
	Guard string
	// DSN is the PostgreSQL connection string, $VARs expanded (keep a
	// password out of the file: dsn: ${AIRS_PG_DSN}).
	DSN string
	// AuditGather bounds how long PostgreSQL's audit writer waits for
	// calls running at the same time to share its next commit (0: never
	// waits; a lone call never does). Default DefaultAuditGather.
	AuditGather time.Duration
}

// DefaultAuditGather is storage.audit_gather's default; store/pg's
// DefaultAuditGather is the same (a cmd/airs test holds them equal).
const DefaultAuditGather = 3 * time.Millisecond

// MaxAuditGather bounds storage.audit_gather: every call under load may
// wait this long for company, so more is a mistake, not a tuning.
const MaxAuditGather = 100 * time.Millisecond

// The backends storage.audit may name.
const (
	StorageFile     = "file"
	StoragePostgres = "postgres"
)

type fileStorage struct {
	Audit    string `yaml:"audit"`
	Index    string `yaml:"index"`
	Learned  string `yaml:"learned"`
	Sessions string `yaml:"sessions"`
	Guard    string `yaml:"guard"`
	DSN      string `yaml:"dsn"`
	// AuditGather: unset keeps DefaultAuditGather.
	AuditGather *Duration `yaml:"audit_gather"`
}

// UsesPostgres reports whether any storage key names PostgreSQL.
func (s Storage) UsesPostgres() bool {
	return s.Audit == StoragePostgres || s.Index == StoragePostgres || s.Learned == StoragePostgres ||
		s.Sessions == StoragePostgres || s.Guard == StoragePostgres
}

// RedactedDSN is DSN with any password replaced, for messages.
func (s Storage) RedactedDSN() string {
	u, err := url.Parse(s.DSN)
	if err == nil && u.Scheme != "" {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.Redacted()
	}
	// key=value form: drop the password pair.
	var kept []string
	for _, kv := range strings.Fields(s.DSN) {
		if !strings.HasPrefix(kv, "password=") {
			kept = append(kept, kv)
		}
	}
	return strings.Join(kept, " ")
}

func (p *parser) buildStorage(fc *fileConfig, c *Config) {
	fs := fc.Storage
	c.Storage = Storage{Audit: StorageFile, Index: StorageFile, Learned: StorageFile, Sessions: StorageFile, Guard: StorageFile,
		DSN: os.ExpandEnv(fs.DSN), AuditGather: DefaultAuditGather}
	if g := fs.AuditGather; g != nil {
		if d := time.Duration(*g); d < 0 || d > MaxAuditGather {
			p.add(p.line("storage", "audit_gather"), "storage.audit_gather %v: want 0 (never wait) up to %v (the default is %v)", d, MaxAuditGather, DefaultAuditGather)
		} else {
			c.Storage.AuditGather = d
		}
	}
	var first string // the first key naming postgres, for the DSN message
	backend := func(key, val, fileMeans string, dst *string) {
		switch val {
		case "", StorageFile:
		case StoragePostgres:
			*dst = StoragePostgres
			if first == "" {
				first = key
			}
		default:
			p.add(p.line("storage", key), "storage.%s %q: want %s (the default, %s) or %s (shared by replicas; needs storage.dsn)", key, val, StorageFile, fileMeans, StoragePostgres)
		}
	}
	backend("audit", fs.Audit, "$AIRS_HOME/audit.jsonl", &c.Storage.Audit)
	backend("index", fs.Index, "chromem-go files in $AIRS_HOME/index", &c.Storage.Index)
	backend("learned", fs.Learned, "$AIRS_HOME/learned.json and $AIRS_HOME/recommender", &c.Storage.Learned)
	backend("sessions", fs.Sessions, "recording.dir/sessions.jsonl", &c.Storage.Sessions)
	backend("guard", fs.Guard, "$AIRS_HOME/guard and the anomaly model files", &c.Storage.Guard)
	if first != "" && c.Storage.DSN == "" {
		msg := "storage." + first + " is postgres but storage.dsn is empty: set it to the database, e.g. dsn: postgres://airs@db.example:5432/airs"
		if strings.Contains(fs.DSN, "$") {
			msg = "storage.dsn " + fs.DSN + " expands to nothing: set that environment variable, or write the DSN"
		}
		line := p.line("storage", "dsn")
		if !p.has("storage", "dsn") {
			line = p.line("storage", first)
		}
		p.add(line, "%s", msg)
	}
}
