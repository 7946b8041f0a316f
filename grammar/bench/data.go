package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/airs-dev/airs/internal/gzfile"
)

// Record is one JSONSchemaBench schema: {"id","schema","tests":[{"valid","data"}],"meta"}.
type Record struct {
	ID   string
	File string // base name of the source file
	line []byte
}

// Test is one instance of a record, serialised as the grammar emits it.
type Test struct {
	Valid bool
	Data  []byte // Canonical(data)
}

// Parsed is a record's schema and tests.
type Parsed struct {
	Schema []byte
	Tests  []Test
}

// Parse decodes the record's line.
func (r *Record) Parse() (*Parsed, error) {
	var raw struct {
		Schema json.RawMessage `json:"schema"`
		Tests  []struct {
			Valid *bool           `json:"valid"`
			Data  json.RawMessage `json:"data"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(r.line, &raw); err != nil {
		return nil, err
	}
	if len(raw.Schema) == 0 {
		return nil, fmt.Errorf("no \"schema\" key")
	}
	p := &Parsed{Schema: raw.Schema}
	for k, t := range raw.Tests {
		if t.Valid == nil || len(t.Data) == 0 {
			return nil, fmt.Errorf("test #%d: needs \"valid\" and \"data\"", k)
		}
		c, err := Canonical(t.Data)
		if err != nil {
			return nil, fmt.Errorf("test #%d: %v", k, err)
		}
		p.Tests = append(p.Tests, Test{Valid: *t.Valid, Data: c})
	}
	return p, nil
}

// DataDir is $DATA_DIR, else ../shared/data.
func DataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	return filepath.Join("..", "shared", "data")
}

// resolveDataPath returns p if it exists, else p under DataDir().
func resolveDataPath(p string) (string, error) {
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	if !filepath.IsAbs(p) {
		q := filepath.Join(DataDir(), p)
		if _, err := os.Stat(q); err == nil {
			return q, nil
		}
	}
	return "", fmt.Errorf("--data %s: not found (nor under DATA_DIR=%s)", p, DataDir())
}

func isLines(n string) bool {
	return strings.HasSuffix(n, ".jsonl.gz") || strings.HasSuffix(n, ".jsonl")
}

// ExpandSources turns --data paths (files or directories) into files; a
// directory contributes its *.jsonl(.gz) files in name order.
func ExpandSources(paths []string) ([]string, error) {
	var files []string
	for _, p0 := range paths {
		p, err := resolveDataPath(p0)
		if err != nil {
			return nil, err
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.IsDir() {
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, err
			}
			var names []string
			for _, e := range ents {
				if !e.IsDir() && isLines(e.Name()) {
					names = append(names, e.Name())
				}
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("--data %s: no *.jsonl.gz or *.jsonl files in it", p0)
			}
			sort.Strings(names)
			for _, n := range names {
				files = append(files, filepath.Join(p, n))
			}
		} else if isLines(p) {
			files = append(files, p)
		} else {
			return nil, fmt.Errorf("--data %s: expected a .jsonl.gz or .jsonl file or a directory", p0)
		}
	}
	return files, nil
}

// LoadRecords reads every line of the given files.
func LoadRecords(files []string) ([]*Record, error) {
	var recs []*Record
	for _, f := range files {
		rc, err := gzfile.Open(f)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(rc)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		base := filepath.Base(f)
		n := 0
		for sc.Scan() {
			n++
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var head struct {
				ID json.RawMessage `json:"id"`
			}
			id := fmt.Sprintf("%s:%d", base, n)
			if err := json.Unmarshal(line, &head); err == nil && len(head.ID) > 0 {
				var s string
				if json.Unmarshal(head.ID, &s) == nil {
					id = s
				} else {
					id = string(head.ID)
				}
			}
			recs = append(recs, &Record{ID: id, File: base, line: append([]byte(nil), line...)})
		}
		rc.Close()
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
	}
	return recs, nil
}

// Select sorts records by id (stable) and applies MaskBench's selection:
// sample > 0 takes that many evenly spaced records (index floor(i*n/sample)),
// then limit > 0 keeps the first limit. It returns the selection and the
// size of the pool it was drawn from.
func Select(recs []*Record, sample, limit int) ([]*Record, int) {
	all := append([]*Record(nil), recs...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	pool := len(all)
	if sample > 0 {
		n := min(sample, pool)
		out := make([]*Record, n)
		for i := range n {
			out[i] = all[i*pool/n]
		}
		all = out
	}
	if limit > 0 && limit < len(all) {
		all = all[:limit]
	}
	return all, pool
}
