package grammar

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/internal/jsonvalue"
)

// dataDir is the shared reference data (skip tests that need it when absent).
func dataDir() string {
	if d := os.Getenv("DATA_DIR"); d != "" {
		return d
	}
	return "../../shared/data"
}

type jsbRecord struct {
	ID     string          `json:"id"`
	Schema json.RawMessage `json:"schema"`
	Tests  []struct {
		Valid bool            `json:"valid"`
		Data  json.RawMessage `json:"data"`
	} `json:"tests"`
}

func readJSB(t testing.TB, path string) []jsbRecord {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []jsbRecord
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r jsbRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// instanceText serialises a test instance as compact JSON in source key
// order with number lexemes preserved.
func instanceText(raw []byte) ([]byte, error) {
	v, err := jsonvalue.Parse(raw)
	if err != nil {
		return nil, err
	}
	return v.AppendCompact(nil), nil
}

// TestJSONSchemaBench measures byte-level faithfulness on JSONSchemaBench
// (set JSB=1; DATA_DIR or ../../shared/data).
func TestJSONSchemaBench(t *testing.T) {
	if os.Getenv("JSB") == "" {
		t.Skip("set JSB=1 to run on JSONSchemaBench")
	}
	files, _ := filepath.Glob(filepath.Join(dataDir(), "jsonschemabench", "*.jsonl.gz"))
	if len(files) == 0 {
		t.Skip("no JSONSchemaBench data under DATA_DIR")
	}
	if f := os.Getenv("JSB_FILE"); f != "" {
		files = []string{filepath.Join(dataDir(), "jsonschemabench", f+".jsonl.gz")}
	}
	var schemas, compiled, passing, falseAcc, validRej int
	errs := map[string]int{}
	var times []time.Duration
	verbose := os.Getenv("JSB_V") != ""
	for _, f := range files {
		for _, r := range readJSB(t, f) {
			if id := os.Getenv("JSB_ID"); id != "" && r.ID != id {
				continue
			}
			schemas++
			t0 := time.Now()
			g, err := Compile(r.Schema, Options{})
			dt := time.Since(t0)
			if dt > time.Second {
				t.Logf("slow: %s %v (err %v)", r.ID, dt, err)
			}
			if err != nil {
				msg := err.Error()
				if ce, ok := err.(*CompileError); ok {
					msg = ce.Keyword + ": " + ce.Msg
					if len(msg) > 60 {
						msg = msg[:60]
					}
				}
				errs[msg]++
				if verbose {
					t.Logf("%s: %v", r.ID, err)
				}
				continue
			}
			times = append(times, dt)
			compiled++
			ok := true
			for i, tc := range r.Tests {
				text, err := instanceText(tc.Data)
				if err != nil {
					t.Fatal(err)
				}
				got := g.Match(text)
				if got != tc.Valid {
					ok = false
					if got {
						falseAcc++
						t.Logf("FALSE ACCEPT %s test %d: %s", r.ID, i, text)
					} else {
						validRej++
						if verbose {
							t.Logf("valid rejected %s test %d: %.200s", r.ID, i, text)
						}
					}
				}
			}
			if ok {
				passing++
			}
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	pct := func(p float64) time.Duration {
		if len(times) == 0 {
			return 0
		}
		return times[int(float64(len(times))*p)]
	}
	t.Logf("schemas %d compiled %d passing %d (%.1f%%) false accepts %d valid rejected %d", schemas, compiled, passing, 100*float64(passing)/float64(schemas), falseAcc, validRej)
	t.Logf("compile p50 %v p90 %v p99 %v max %v", pct(0.5), pct(0.9), pct(0.99), times[len(times)-1])
	type kv struct {
		k string
		v int
	}
	var es []kv
	for k, v := range errs {
		es = append(es, kv{k, v})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].v > es[j].v })
	var b strings.Builder
	for i, e := range es {
		if i > 25 {
			break
		}
		b.WriteString("\n  ")
		b.WriteString(e.k)
		b.WriteString(": ")
		b.WriteString(strings.Repeat("", 0))
		b.WriteString(itoa(e.v))
	}
	t.Logf("compile errors:%s", b.String())
}

func itoa(i int) string { return strconvItoa(i) }

var strconvItoa = strconv.Itoa
