package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/grammar"
)

func TestCanonical(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{ "b" : 1.0, "a":[1e5, -0, "x"] }`, `{"b":1.0,"a":[1e5,-0,"x"]}`},
		{`{"k":1,"k":2}`, `{"k":1,"k":2}`},
		{`"\u00e9\u2028\/\u0001\n\"\\"`, "\"é\u2028/\\u0001\\n\\\"\\\\\""},
		{`[true,false,null,{}]`, `[true,false,null,{}]`},
		{`"\ud83d\ude00"`, `"😀"`},
		{"\"\x7f\"", "\"\x7f\""},
	}
	for _, c := range cases {
		got, err := Canonical([]byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if _, err := Canonical([]byte(`{"a":1} x`)); err == nil {
		t.Error("trailing data accepted")
	}
}

// The instances of the fixture lines, written by Python with compact
// separators, are their own canonical form: Canonical(data) == raw bytes of
// data == json.Compact(data).
func checkCanonicalEqualsRaw(t *testing.T, files []string) int {
	t.Helper()
	recs, err := LoadRecords(files)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		var raw struct {
			Tests []struct {
				Data json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(r.line, &raw); err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		for k, tt := range raw.Tests {
			c, err := Canonical(tt.Data)
			if err != nil {
				t.Fatalf("%s #%d: %v", r.ID, k, err)
			}
			var cmp bytes.Buffer
			if err := json.Compact(&cmp, tt.Data); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(c, tt.Data) || !bytes.Equal(c, cmp.Bytes()) {
				t.Errorf("%s #%d: canonical %q != raw %q", r.ID, k, c, tt.Data)
			}
			n++
		}
	}
	return n
}

func TestCanonicalEqualsRawFixture(t *testing.T) {
	if n := checkCanonicalEqualsRaw(t, []string{"testdata/mini.jsonl.gz"}); n == 0 {
		t.Fatal("fixture has no instances")
	}
}

func TestCanonicalEqualsRawJSONSchemaBench(t *testing.T) {
	dir := os.Getenv("DATA_DIR")
	if dir == "" {
		t.Skip("DATA_DIR not set: skipping the check over all of jsonschemabench (run by make conformance)")
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join("..", "..", dir) // DATA_DIR is relative to the module root
	}
	if _, err := os.Stat(filepath.Join(dir, "jsonschemabench")); err != nil {
		t.Skipf("jsonschemabench is not under DATA_DIR=%s: %v", dir, err)
	}
	files, err := ExpandSources([]string{filepath.Join(dir, "jsonschemabench")})
	if err != nil {
		t.Fatal(err)
	}
	n := checkCanonicalEqualsRaw(t, files)
	t.Logf("%d instances are byte-identical to their canonical form", n)
}

func TestSelect(t *testing.T) {
	recs, err := LoadRecords([]string{"testdata/mini.jsonl.gz"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 12 {
		t.Fatalf("%d records, want 12", len(recs))
	}
	all, pool := Select(recs, 0, 0)
	if pool != 12 || len(all) != 12 {
		t.Fatalf("pool %d len %d", pool, len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i-1].ID > all[i].ID {
			t.Fatalf("not sorted: %s > %s", all[i-1].ID, all[i].ID)
		}
	}
	s, _ := Select(recs, 5, 0)
	// floor(i*12/5) = 0, 2, 4, 7, 9
	for k, i := range []int{0, 2, 4, 7, 9} {
		if s[k].ID != all[i].ID {
			t.Errorf("sample[%d] = %s, want %s", k, s[k].ID, all[i].ID)
		}
	}
	l, _ := Select(recs, 5, 2)
	if len(l) != 2 || l[1].ID != all[2].ID {
		t.Errorf("sample 5 limit 2 = %v", l)
	}
	p, err := all[0].Parse()
	if err != nil || len(p.Schema) == 0 {
		t.Fatalf("parse: %v", err)
	}
}

func TestGreedyTokenizer(t *testing.T) {
	v := &grammar.Vocab{
		Tokens:  [][]byte{[]byte("a"), []byte("ab"), []byte("abc"), []byte("b"), []byte("c"), []byte("ab"), []byte("<eos>"), []byte("bc")},
		Special: []bool{false, false, false, false, false, false, true, false},
		EOS:     []int{6},
		Size:    8,
	}
	tok := NewGreedyTokenizer(v)
	got, err := tok.Encode([]byte("ababcbc"))
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{1, 2, 7} // "ab" (id 1 beats the duplicate 5), "abc", "bc"
	if len(got) != len(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	if _, err := tok.Encode([]byte("<eos>")); err == nil {
		t.Error("special token bytes were used")
	}
}

func TestPercentiles(t *testing.T) {
	xs := []float64{}
	for i := 100; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	p := Summarize(xs)
	// sorted[floor(100*50/100)] = sorted[50] = 51
	if p.P50 != 51 || p.P90 != 91 || p.P99 != 100 || p.P999 != 100 || p.Max != 100 {
		t.Errorf("percentiles %+v", p)
	}
	// p99.9 must sit between p99 and max: over 2000 values 1..2000 it is
	// sorted[1998] = 1999 while p99 is sorted[1980] = 1981 and max 2000.
	xs = xs[:0]
	for i := 2000; i >= 1; i-- {
		xs = append(xs, float64(i))
	}
	if p := Summarize(xs); p.P99 != 1981 || p.P999 != 1999 || p.Max != 2000 {
		t.Errorf("percentiles of 2000: %+v", p)
	}
	if z := Summarize(nil); z != (Percentiles{}) {
		t.Errorf("empty: %+v", z)
	}
}

func TestSummaryShape(t *testing.T) {
	var tot Totals
	tot.Add(&SchemaResult{Status: StatusOK, Compiled: true, CompileMS: 2, maskUS: []float64{1, 2, 3}, ValidTotal: 1, ValidAccepted: 1})
	tot.Add(&SchemaResult{Status: StatusInvalidationError, Compiled: true, CompileMS: 4, InvalidTotal: 3, InvalidRejected: 1})
	tot.Add(&SchemaResult{Status: StatusCompileError})
	tot.Add(&SchemaResult{Status: StatusTimeout})
	tot.Add(&SchemaResult{Status: StatusInputError})
	b, err := json.Marshal(tot.Finish())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"summary":true,"schemas":4,"compiled":2,"passing":1,"compile_errors":1,"false_accepts":2,"timeouts":1,"mask_us":{"p50":2,"p90":3,"p99":3,"p99_9":3,"max":3},"compile_ms":{"p50":4,"p90":4,"p99":4,"p99_9":4,"max":4}}`
	if string(b) != want {
		t.Errorf("summary\n got %s\nwant %s", b, want)
	}
}
