package chat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPresentShowsTheAnswer: each shape of result is shown as the answer
// it holds — a value, a listing's names, a text's first lines with how
// much was cut, a comparison's differences, a summary — and a result of
// no known shape is left to JSON.
func TestPresentShowsTheAnswer(t *testing.T) {
	var long []string
	for i := 1; i <= 30; i++ {
		long = append(long, fmt.Sprintf("line %d", i))
	}
	longText, _ := json.Marshal(strings.Join(long, "\n"))
	cases := []struct {
		name, out, request string
		want, not          []string
	}{
		{"value", `{"expression":"(12.5 + 7) * 3","result":58.5,"text":"58.5"}`, "", []string{"(12.5 + 7) * 3 = 58.5\n"}, []string{`"result"`}},
		{"value read as a person reads it", `{"expression":"(18 / 100 * 240)","result":43.199999999999996,"text":"43.2"}`, "", []string{"(18 / 100 * 240) = 43.2\n"}, []string{"43.1999"}},
		{"listing", `{"space":"documents","dir":"papers","files":[{"path":"papers/a.pdf","name":"a.pdf","type":"file","size":2048},{"path":"papers/old","name":"old","type":"dir","size":0}],"count":2}`, "",
			[]string{"2 files in documents/papers:", "  papers/a.pdf  (2.0 KB)", "  papers/old/"}, []string{"mod_time", "{"}},
		{"empty listing", `{"space":"documents","dir":".","files":[],"count":0}`, "", []string{"no files in documents"}, nil},
		{"long text", `{"space":"documents","path":"notes/long.txt","text":` + string(longText) + `,"truncated":false}`, "read notes/long.txt",
			[]string{"notes/long.txt (space documents), 30 lines:", "  line 20\n", "… 10 more lines (", "/json shows the whole result"}, []string{"line 21"}},
		{"question", `{"space":"documents","path":"quotes/acme-2025.pdf","num_pages":1,"text":"Acme Cloud price list 2025\nStarter plan: $12 per month\nPro plan: $30 per month\nStorage: $0.03 per GB"}`,
			"what does the 2025 quote cost for the pro plan", []string{"1 page", "the lines that answer it:\n  » Pro plan: $30 per month\nthe text:"}, []string{"» Starter"}},
		{"question in a sentence", `{"space":"documents","path":"contracts/lease-2023.txt","text":"Lease 2023. Rent: 950 EUR a month. Deposit: 1,900 EUR. Term: 12 months."}`,
			"how much is the deposit in the 2023 lease", []string{"  » Deposit: 1,900 EUR.\n"}, []string{"» Rent"}},
		{"no question", `{"space":"documents","path":"quotes/acme-2025.pdf","text":"Pro plan: $30 per month\nOther"}`, "read the 2025 quote", nil, []string{"answer"}},
		{"compare", `{"identical":false,"summary":"A → B: 1 line changed.","changes":[{"kind":"changed","a_line":2,"b_line":2,"a":["two"],"b":["2"]}],"diff":"--- A\n+++ B\n-two\n+2\n"}`, "",
			[]string{"A → B: 1 line changed.\n", "  -two\n  +2\n"}, []string{`"changes"`}},
		{"summary", `{"summary":"Short version.","method":"extractive","words":2}`, "", []string{"Short version.\n"}, []string{"extractive"}},
	}
	for _, c := range cases {
		got, ok := present(json.RawMessage(c.out), c.request)
		if !ok {
			t.Errorf("%s: not presented", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: want %q in\n%s", c.name, w, got)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q should not be in\n%s", c.name, n, got)
			}
		}
	}
	for _, out := range []string{`{"partial":true,"waited":3}`, `[1,2]`, `"x"`, `not json`} {
		if got, ok := present(json.RawMessage(out), "x"); ok {
			t.Errorf("%s has no known shape, presented as %q", out, got)
		}
	}
}

// TestPlanShowsItsAnswer: in a plan of several steps the texts read for
// the next step are shown by their first line, the last step's result
// whole.
func TestPlanShowsItsAnswer(t *testing.T) {
	r := newRig(t)
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("read hello.txt and then summarize it")
	m = r.expect(m, "tool: read-file")
	m = r.expect(m, "step 2/2:")
	m = r.expect(m, "tool: summarize")
	m = r.expect(m, "hello.txt (space documents), 1 line (read for the next step; /json shows it whole)\n")
	m = r.expect(m, "ok: summarize")
	m = r.expect(m, "hello from the docs space")
	r.expect(m, "> ")
	r.stop()
	if n := strings.Count(r.out.String(), "hello from the docs space"); n != 1 {
		t.Errorf("the text read shows %d times (want once, as the summary):\n%s", n, r.out)
	}
}

// TestEachResultSaysWhoseItIs: a plan that summarizes each file says, at
// each result, which file it is for.
func TestEachResultSaysWhoseItIs(t *testing.T) {
	r := newRig(t)
	must(t, os.MkdirAll(filepath.Join(r.docs, "minutes"), 0o755))
	must(t, os.WriteFile(filepath.Join(r.docs, "minutes", "monday.txt"), []byte("Monday: the budget was approved.\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(r.docs, "minutes", "friday.txt"), []byte("Friday: the launch moved to June.\n"), 0o644))
	r.start(Options{})
	m := r.expect(0, "> ")
	r.say("summarize each file in minutes")
	m = r.expect(m, "tool: summarize")
	r.expect(m, "> ")
	r.stop()
	out := r.out.String()
	for _, f := range []string{"minutes/monday.txt", "minutes/friday.txt"} {
		if !strings.Contains(out, "ok: summarize for "+f) {
			t.Errorf("no summary says it is for %s:\n%s", f, out)
		}
	}
}
