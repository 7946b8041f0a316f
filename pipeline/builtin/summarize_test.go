package builtin

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

const article = `Solar power capacity grew faster than any other energy source last year.
Installations of solar panels reached a record, driven by falling panel prices.
The weather was pleasant on the day of the announcement.
Analysts expect solar capacity to keep growing as panel prices fall further and storage improves.
A spokesperson thanked the staff.
Cheaper storage lets solar power supply electricity after sunset, which raises the value of solar capacity.`

func TestSplitSentences(t *testing.T) {
	got := SplitSentences("Dr. Smith met J. Doe at 3.5 p.m. yesterday. It went well! Did it? Yes.\n\nIntroduction\nThe e.g. case stays whole. Prices rose 3.5% in 2024.")
	want := []string{
		"Dr. Smith met J. Doe at 3.5 p.m. yesterday.",
		"It went well!",
		"Did it?",
		"Yes.",
		"Introduction",
		"The e.g. case stays whole.",
		"Prices rose 3.5% in 2024.",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestExtractive(t *testing.T) {
	s := Extractive(article, 40)
	if s.Method != "extractive" || s.SourceSentences != 6 {
		t.Fatalf("%+v", s)
	}
	if s.Words > 40 || s.Words != len(strings.Fields(s.Summary)) {
		t.Fatalf("words %d for %q", s.Words, s.Summary)
	}
	// The central sentences (solar, capacity, prices, storage) win; the
	// off-topic ones lose.
	for _, off := range []string{"weather", "spokesperson"} {
		if strings.Contains(s.Summary, off) {
			t.Errorf("summary kept an off-topic sentence (%s): %q", off, s.Summary)
		}
	}
	if !strings.Contains(s.Summary, "Analysts expect solar capacity") {
		t.Errorf("summary misses the most central sentence: %q", s.Summary)
	}
	// Kept sentences are in their original order.
	sents := SplitSentences(article)
	last := -1
	for _, k := range SplitSentences(s.Summary) {
		i := slices.Index(sents, k)
		if i <= last {
			t.Fatalf("sentence %q out of order or not from the text", k)
		}
		last = i
	}

	// A limit below the shortest best sentence cuts it, marked.
	s = Extractive(article, 5)
	if s.Words != 5 || !strings.HasSuffix(s.Summary, "…") {
		t.Fatalf("limit 5: %+v", s)
	}
	// Empty text: empty summary.
	if s = Extractive("  \n ", 10); s.Summary != "" || s.Words != 0 {
		t.Fatalf("empty: %+v", s)
	}
}

type fakeModel struct {
	out string
	err error
}

func (m fakeModel) Summarize(ctx context.Context, text string, maxWords int) (string, error) {
	return m.out, m.err
}

func TestSummarizeHandler(t *testing.T) {
	entries, err := Tools(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tool Entry
	for _, e := range entries {
		if e.Tool.Name == "summarize" {
			tool = e
		}
	}
	out, err := invoke(t, tool, "anyone", map[string]any{"text": article, "max_words": 30})
	if err != nil {
		t.Fatal(err)
	}
	if s := decode[Summary](t, out); s.Method != "extractive" || s.Words > 30 || s.Words == 0 {
		t.Fatalf("%+v", s)
	}

	// A model, when plugged in, writes the summary (held to the limit).
	withModel := Entry{Tool: tool.Tool, Handler: Summarize(fakeModel{out: "Solar grows fast because panels and storage got cheap, analysts say."})}
	out, err = invoke(t, withModel, "anyone", map[string]any{"text": article, "max_words": 6})
	if err != nil {
		t.Fatal(err)
	}
	if s := decode[Summary](t, out); s.Method != "model" || s.Summary != "Solar grows fast because panels and…" || s.Words != 6 {
		t.Fatalf("%+v", s)
	}
	// A failing model falls back to extractive and says so.
	failing := Entry{Tool: tool.Tool, Handler: Summarize(fakeModel{err: errors.New("connection refused")})}
	out, err = invoke(t, failing, "anyone", map[string]any{"text": article})
	if err != nil {
		t.Fatal(err)
	}
	if s := decode[Summary](t, out); s.Method != "extractive" || !strings.Contains(s.Note, "connection refused") {
		t.Fatalf("%+v", s)
	}
	_, err = invoke(t, tool, "anyone", map[string]any{"text": article, "max_words": 1})
	if rejectCode(err) != CodeBadParams {
		t.Fatalf("max_words 1: %v", err)
	}
}

func TestFieldsCtxAndFewWords(t *testing.T) {
	long := strings.Repeat("word  \u00a0spaced\tout\n", 20000) // > 64 KiB, Unicode spaces too
	for _, s := range []string{"", " ", "a", " a b ", long, strings.Repeat("x", 70000) + " y"} {
		got, err := fieldsCtx(context.Background(), s)
		if err != nil || !slices.Equal(got, strings.Fields(s)) {
			t.Fatalf("fieldsCtx differs from strings.Fields on %.40q (%d fields vs %d): %v", s, len(got), len(strings.Fields(s)), err)
		}
		for n := range 4 {
			if fewWords(s, n) != (len(strings.Fields(s)) <= n) {
				t.Fatalf("fewWords(%.40q, %d) = %v", s, n, fewWords(s, n))
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := fieldsCtx(ctx, long); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
