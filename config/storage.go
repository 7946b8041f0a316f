package config

import (
	"net/url"
	"os"
	"strings"
)

// Storage chooses where shared state lives (storage: in airs.yaml). The
// default is AIRS_HOME's files, right for one machine; PostgreSQL lets
// several `airs serve` replicas share one state (docs/scaling.md).
type Storage struct {
	// Audit is the audit log's backend: StorageFile ($AIRS_HOME/audit.jsonl)
	// or StoragePostgres (the database at DSN).
	Audit string
	// DSN is the PostgreSQL connection string, $VARs expanded (keep a
	// password out of the file: dsn: ${AIRS_PG_DSN}).
	DSN string
}

// The backends storage.audit may name.
const (
	StorageFile     = "file"
	StoragePostgres = "postgres"
)

type fileStorage struct {
	Audit string `yaml:"audit"`
	DSN   string `yaml:"dsn"`
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
	c.Storage = Storage{Audit: StorageFile, DSN: os.ExpandEnv(fs.DSN)}
	switch fs.Audit {
	case "", StorageFile:
	case StoragePostgres:
		c.Storage.Audit = StoragePostgres
		if c.Storage.DSN == "" {
			msg := "storage.audit is postgres but storage.dsn is empty: set it to the database, e.g. dsn: postgres://airs@db.example:5432/airs"
			if strings.Contains(fs.DSN, "$") {
				msg = "storage.dsn " + fs.DSN + " expands to nothing: set that environment variable, or write the DSN"
			}
			line := p.line("storage", "dsn")
			if !p.has("storage", "dsn") {
				line = p.line("storage", "audit")
			}
			p.add(line, "%s", msg)
		}
	default:
		p.add(p.line("storage", "audit"), "storage.audit %q: want %s (the default, $AIRS_HOME/audit.jsonl) or %s (shared by replicas; needs storage.dsn)", fs.Audit, StorageFile, StoragePostgres)
	}
}
