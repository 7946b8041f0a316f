package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStorageDefaultIsFiles(t *testing.T) {
	home := isolate(t)
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte("spaces: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Audit != StorageFile || c.Storage.Index != StorageFile || c.Storage.Sessions != StorageFile ||
		c.Storage.Guard != StorageFile || c.Storage.DSN != "" || c.Storage.UsesPostgres() {
		t.Fatalf("default storage = %+v, want the file audit log", c.Storage)
	}
}

func TestStoragePostgres(t *testing.T) {
	home := isolate(t)
	t.Setenv("TEST_PG_DSN", "postgres://airs:s3cret@db.example:5432/airs")
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte("storage:\n  audit: postgres\n  dsn: ${TEST_PG_DSN}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Audit != StoragePostgres || c.Storage.DSN != "postgres://airs:s3cret@db.example:5432/airs" {
		t.Fatalf("storage = %+v", c.Storage)
	}
	if r := c.Storage.RedactedDSN(); strings.Contains(r, "s3cret") || !strings.Contains(r, "db.example:5432/airs") {
		t.Fatalf("RedactedDSN = %q", r)
	}
	kv := Storage{DSN: "host=db user=airs password=s3cret dbname=airs"}
	if r := kv.RedactedDSN(); strings.Contains(r, "s3cret") || !strings.Contains(r, "host=db") {
		t.Fatalf("RedactedDSN(key=value) = %q", r)
	}
}

func TestStorageProblems(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"storage:\n  audit: mysql\n", `airs.yaml:2: storage.audit "mysql": want file`},
		{"storage:\n  audit: postgres\n", "airs.yaml:2: storage.audit is postgres but storage.dsn is empty"},
		{"storage:\n  audit: postgres\n  dsn: ${NO_SUCH_VAR_AIRS}\n", "airs.yaml:3: storage.dsn ${NO_SUCH_VAR_AIRS} expands to nothing"},
		{"storage:\n  index: pgvector\n", `airs.yaml:2: storage.index "pgvector": want file`},
		{"storage:\n  index: postgres\n", "airs.yaml:2: storage.index is postgres but storage.dsn is empty"},
		{"storage:\n  learned: sqlite\n", `airs.yaml:2: storage.learned "sqlite": want file`},
		{"storage:\n  sessions: s3\n", `airs.yaml:2: storage.sessions "s3": want file`},
		{"storage:\n  guard: postgres\n", "airs.yaml:2: storage.guard is postgres but storage.dsn is empty"},
		{"storage:\n  audit_gather: 1s\n", "airs.yaml:2: storage.audit_gather 1s: want 0 (never wait) up to 100ms"},
		{"storage:\n  audit_gather: -2ms\n", "airs.yaml:2: storage.audit_gather -2ms: want 0"},
		{"storage:\n  audit_gather: soon\n", `"soon" is not a duration`},
	} {
		home := isolate(t)
		_, err := Parse(filepath.Join(home, "airs.yaml"), []byte(tc.yaml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// The commented storage section of Example parses.
func TestStorageExampleParses(t *testing.T) {
	home := isolate(t)
	t.Setenv("AIRS_PG_DSN", "postgres://airs@127.0.0.1/airs")
	var lines []string
	in := false
	for _, l := range strings.Split(Example, "\n") {
		if l == "# storage:" {
			in = true
		}
		if in && !strings.HasPrefix(l, "#") {
			break
		}
		if in {
			lines = append(lines, strings.TrimPrefix(l, "# "))
		}
	}
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Audit != StoragePostgres || c.Storage.Sessions != StoragePostgres || c.Storage.Guard != StoragePostgres ||
		c.Storage.Learned != StoragePostgres || c.Storage.DSN != "postgres://airs@127.0.0.1/airs" || c.Storage.AuditGather != DefaultAuditGather {
		t.Fatalf("Example's storage section = %+v (%d lines)", c.Storage, len(lines))
	}
}

func TestStorageIndexPostgres(t *testing.T) {
	home := isolate(t)
	c, err := Parse(filepath.Join(home, "airs.yaml"), []byte("storage:\n  index: postgres\n  learned: postgres\n  dsn: postgres://airs@db/airs\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Storage.Index != StoragePostgres || c.Storage.Learned != StoragePostgres || c.Storage.Audit != StorageFile || !c.Storage.UsesPostgres() {
		t.Fatalf("storage = %+v", c.Storage)
	}
}

// storage.audit_gather: the default when unset, 0 turns gathering off.
func TestStorageAuditGather(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		want time.Duration
	}{
		{"spaces: {}\n", DefaultAuditGather},
		{"storage:\n  audit_gather: 0\n", 0},
		{"storage:\n  audit_gather: 500us\n", 500 * time.Microsecond},
		{"storage:\n  audit_gather: 20ms\n", 20 * time.Millisecond},
	} {
		home := isolate(t)
		c, err := Parse(filepath.Join(home, "airs.yaml"), []byte(tc.yaml))
		if err != nil {
			t.Fatalf("%q: %v", tc.yaml, err)
		}
		if c.Storage.AuditGather != tc.want {
			t.Errorf("%q: AuditGather = %v, want %v", tc.yaml, c.Storage.AuditGather, tc.want)
		}
	}
}
