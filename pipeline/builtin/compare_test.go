package builtin

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// apply replays a diff script on a and returns the result, which must be b.
func apply(a, b []string, ops []DiffOp) []string {
	var out []string
	for _, op := range ops {
		switch op.Kind {
		case OpEqual:
			out = append(out, a[op.ALo:op.AHi]...)
		case OpInsert:
			out = append(out, b[op.BLo:op.BHi]...)
		}
	}
	return out
}

// lcs is the textbook O(NM) longest common subsequence length: the number
// of equal lines in a minimal diff.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func checkDiff(t *testing.T, a, b []string) {
	t.Helper()
	ops := DiffLines(a, b)
	if got := apply(a, b, ops); !slices.Equal(got, b) && !(len(got) == 0 && len(b) == 0) {
		t.Fatalf("diff of %q → %q does not apply: got %q (ops %+v)", a, b, got, ops)
	}
	equal, ai, bi := 0, 0, 0
	for k, op := range ops {
		if op.ALo != ai || op.BLo != bi {
			t.Fatalf("ops not contiguous at %d: %+v", k, ops)
		}
		if op.Kind == OpEqual {
			equal += op.AHi - op.ALo
			if !slices.Equal(a[op.ALo:op.AHi], b[op.BLo:op.BHi]) {
				t.Fatalf("equal op %+v covers different lines", op)
			}
		}
		if k > 0 && ops[k-1].Kind == op.Kind {
			t.Fatalf("runs not maximal: %+v", ops)
		}
		ai, bi = op.AHi, op.BHi
	}
	if ai != len(a) || bi != len(b) {
		t.Fatalf("ops end at %d,%d, want %d,%d", ai, bi, len(a), len(b))
	}
	if want := lcs(a, b); equal != want {
		t.Fatalf("diff of %q → %q keeps %d lines, minimal keeps %d", a, b, equal, want)
	}
}

func TestDiffLinesMinimal(t *testing.T) {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, "")
	}
	for _, c := range [][2]string{
		{"", ""}, {"a", ""}, {"", "a"}, {"a", "a"}, {"a", "b"},
		{"abcabba", "cbabac"}, // Myers' paper example
		{"abcdef", "abXdef"}, {"xabc", "abc"}, {"abc", "abcx"},
		{"aaaa", "aa"}, {"abab", "baba"}, {"abcdefg", "gfedcba"},
	} {
		checkDiff(t, split(c[0]), split(c[1]))
	}
	// Random sequences over a small alphabet (many repeats: hard cases).
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		gen := func() []string {
			n := r.IntN(25)
			s := make([]string, n)
			for i := range s {
				s[i] = string(rune('a' + r.IntN(4)))
			}
			return s
		}
		checkDiff(t, gen(), gen())
	}
}

func TestDiffLinesLarge(t *testing.T) {
	// 20,000 lines with scattered edits: linear space, quick.
	var a, b []string
	for i := range 20000 {
		l := "line " + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		a = append(a, l)
		if i%997 == 0 {
			b = append(b, "inserted")
		}
		if i%1499 != 0 {
			b = append(b, l)
		}
	}
	ops := DiffLines(a, b)
	if !slices.Equal(apply(a, b, ops), b) {
		t.Fatal("large diff does not apply")
	}
}

func FuzzDiffLines(f *testing.F) {
	f.Add("abcabba", "cbabac")
	f.Add("a\nb\nc", "a\nc\nd")
	f.Fuzz(func(t *testing.T, x, y string) {
		a, b := strings.Split(x, ""), strings.Split(y, "")
		if len(a) > 60 || len(b) > 60 {
			return
		}
		checkDiff(t, a, b)
	})
}

const priceA = `Acme Cloud - Price list 2024
Basic plan: $10 per month
Pro plan: $25 per month
Enterprise plan: $1,200 per year
Storage: 0.02 per GB
Support: included`

const priceB = `Acme Cloud - Price list 2025
Pro plan: $30 per month
Basic plan: $10 per month
Enterprise plan: $1,150 per year
Storage:   0.02   per GB
Support: included
Discount for students: 15%`

func TestCompareTexts(t *testing.T) {
	c := CompareTexts(priceA, priceB, "2024.pdf", "2025.pdf", true)
	if c.Identical {
		t.Fatal("identical")
	}
	// Numbers are matched by their labels even though the rows moved.
	type nc struct {
		label, a, b string
		delta       float64
	}
	var got []nc
	for _, n := range c.Numbers {
		got = append(got, nc{n.Label, n.A, n.B, n.Delta})
	}
	// The year in the heading is the document's edition, not a number
	// that changed (TestCompareHeadingYear).
	want := []nc{
		{"Pro plan", "$25", "$30", 5},
		{"Enterprise plan", "$1,200", "$1,150", -50},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("numbers:\n got %+v\nwant %+v", got, want)
	}
	for _, n := range c.Numbers {
		if n.Label == "Pro plan" && (n.Percent == nil || *n.Percent != 20 || n.ALine != 3 || n.BLine != 2) {
			t.Errorf("Pro plan: %+v", n)
		}
	}
	if c.Added+c.Removed+c.Changed == 0 || c.Unchanged < 2 {
		t.Errorf("counts: %+v", c)
	}
	for _, s := range []string{"Pro plan $25 → $30 (+20.0%)", "Enterprise plan $1,200 → $1,150 (-4.2%)", "2024.pdf → 2025.pdf"} {
		if !strings.Contains(c.Summary, s) {
			t.Errorf("summary lacks %q: %s", s, c.Summary)
		}
	}
	if !strings.Contains(c.Diff, "--- 2024.pdf\n+++ 2025.pdf\n") || !strings.Contains(c.Diff, "+Discount for students: 15%") {
		t.Errorf("diff:\n%s", c.Diff)
	}
	// Whitespace-only change ignored by default, reported when asked.
	if strings.Contains(c.Diff, "-Storage") {
		t.Errorf("whitespace-only change reported:\n%s", c.Diff)
	}
	strict := CompareTexts(priceA, priceB, "A", "B", false)
	if !strings.Contains(strict.Diff, "-Storage: 0.02 per GB") {
		t.Errorf("strict diff misses the whitespace change:\n%s", strict.Diff)
	}

	same := CompareTexts("x\ny\n", "x\r\ny", "A", "B", true)
	if !same.Identical || same.Diff != "" || !strings.Contains(same.Summary, "identical") {
		t.Errorf("same: %+v", same)
	}
}

func TestCompareHandler(t *testing.T) {
	tools := testTools(t, nil)
	out, err := invoke(t, tools["compare"], "anyone", map[string]any{"a": priceA, "b": priceB, "a_label": "old", "b_label": "new"})
	if err != nil {
		t.Fatal(err)
	}
	c := decode[Comparison](t, out)
	if len(c.Numbers) != 2 || !strings.HasPrefix(c.Summary, "old → new") {
		t.Fatalf("%+v", c)
	}
	out, err = invoke(t, tools["compare"], "anyone", map[string]any{"a": "", "b": "one line"})
	if err != nil {
		t.Fatal(err)
	}
	if c = decode[Comparison](t, out); c.Added != 1 || c.Changes[0].Kind != "added" || c.Changes[0].BLine != 1 {
		t.Fatalf("%+v", c)
	}
}

func TestParseNumber(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{
		{"$1,200", 1200}, {"1,200.50", 1200.5}, {"10,50", 10.5}, {"€ 9.99", 9.99},
		{"15%", 15}, {"-3", -3}, {"−4.5", -4.5}, {"12 €", 12}, {"1,234,567", 1234567},
	} {
		if got, ok := parseNumber(c.in); !ok || got != c.want {
			t.Errorf("parseNumber(%q) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
}

// The unified diff is real: GNU patch applies it to A and gets B.
func TestUnifiedDiffAppliesWithPatch(t *testing.T) {
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		t.Skip("patch not installed")
	}
	dir := t.TempDir()
	a := priceA + "\n"
	b := priceB + "\n"
	c := CompareTexts(a, b, "a.txt", "b.txt", false)
	writeFile(t, filepath.Join(dir, "a.txt"), []byte(a))
	writeFile(t, filepath.Join(dir, "d.patch"), []byte(c.Diff))
	cmd := exec.Command(patchBin, "-s", "a.txt", "d.patch")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch: %v\n%s\ndiff:\n%s", err, out, c.Diff)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	if string(got) != b {
		t.Fatalf("patched A:\n%s\nwant:\n%s", got, b)
	}
}

// A year in a heading is not a price: "Pricing 2024" → "Pricing 2025"
// reports no number, while the same years in a labelled row, and amounts
// in a heading, still do.
func TestCompareHeadingYear(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want []string // labels of the numbers reported
	}{
		{"Pricing 2024\nBasic: $10\n", "Pricing 2025\nBasic: $12\n", []string{"Basic"}},
		{"# Price list 2024\nPro: $25\n", "# Price list 2025\nPro: $25\n", nil},
		{"Acme Cloud - Price list 2024\n", "Acme Cloud - Price list 2025\n", nil},
		{"## 2024 rates\nStorage: 0.02 per GB\n", "## 2025 rates\nStorage: 0.03 per GB\n", []string{"Storage"}},
		// Not headings: a labelled row, a year-like amount with a currency.
		{"Valid until: 2024\n", "Valid until: 2025\n", []string{"Valid until"}},
		{"Pricing 2024\nTotal 2024 €\n", "Pricing 2025\nTotal 2030 €\n", []string{"Total"}},
		{"Pro plan costs 1,999 per year\n", "Pro plan costs 2,049 per year\n", []string{"Pro plan costs"}},
	} {
		got := CompareTexts(c.a, c.b, "A", "B", true)
		var labels []string
		for _, n := range got.Numbers {
			labels = append(labels, n.Label)
			if n.AValue >= 1900 && n.AValue <= 2099 && n.A == strconv.Itoa(int(n.AValue)) && !strings.Contains(n.Label, "Valid") {
				t.Errorf("%q → %q: a bare year read as a number: %+v", c.a, c.b, n)
			}
		}
		if !slices.Equal(labels, c.want) {
			t.Errorf("%q → %q: numbers %v, want %v (%+v)", c.a, c.b, labels, c.want, got.Numbers)
		}
	}
}

// numberRE is the specification numberSpans implements by hand.
var numberRE = regexp.MustCompile(`[$€£¥₹]?\s?[-−]?\d[\d,]*(?:\.\d+)?(?:\s?[%€])?`)

func checkNumberSpans(t *testing.T, s string) {
	t.Helper()
	var want [][2]int
	for _, m := range numberRE.FindAllStringIndex(s, -1) {
		want = append(want, [2]int{m[0], m[1]})
	}
	if got := numberSpans(s); !slices.Equal(got, want) {
		t.Fatalf("numberSpans(%q) = %v, regexp says %v", s, got, want)
	}
	if got, want := replaceNumbers(s, " # "), numberRE.ReplaceAllString(s, " # "); got != want {
		t.Fatalf("replaceNumbers(%q) = %q, regexp says %q", s, got, want)
	}
}

func TestNumberSpansMatchRegexp(t *testing.T) {
	for _, s := range []string{"", "Pro plan: $1,200.50 / month", "12 €, 15%, −4.5 and - 3", "€ 9.99", "1.", "x.5", "$ -5 %", "5\t%", "$$5", "₹1,00,000", "\xff5\xfe"} {
		checkNumberSpans(t, s)
	}
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"$", "€", "£", "¥", "₹", " ", "\t", "\n", "-", "−", "0", "7", ",", ".", "%", "a", "é", "\xff"}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		checkNumberSpans(t, sb.String())
	}
	thousandsRE := regexp.MustCompile(`^\d{1,3}(,\d{3})+(\.\d+)?$`)
	decimalCommaRE := regexp.MustCompile(`^\d+,\d{1,2}$`)
	digits := []string{"0", "1", "9", ",", "."}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(10) {
			sb.WriteString(digits[r.IntN(len(digits))])
		}
		s := sb.String()
		if thousands(s) != thousandsRE.MatchString(s) || decimalComma(s) != decimalCommaRE.MatchString(s) {
			t.Fatalf("%q: thousands %v (regexp %v), decimalComma %v (regexp %v)", s,
				thousands(s), thousandsRE.MatchString(s), decimalComma(s), decimalCommaRE.MatchString(s))
		}
	}
}

func FuzzNumberSpans(f *testing.F) {
	f.Add("Pro plan: $1,200.50 / month, 12 €, 15%")
	f.Fuzz(func(t *testing.T, s string) { checkNumberSpans(t, s) })
}

func TestCollapseSpace(t *testing.T) {
	for _, s := range []string{"", " ", "a", "a b", " a", "a ", "a  b", "a\tb", "a\u00a0b", "é b", "a b c", "a\u2003 b", "  "} {
		if got, want := collapseSpace(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Errorf("collapseSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// splitLinesCtx splits as strings.Split did after turning \r\n into \n.
func TestSplitLines(t *testing.T) {
	old := func(s string) []string {
		s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
		if s == "" {
			return nil
		}
		return strings.Split(s, "\n")
	}
	r := rand.New(rand.NewPCG(11, 12))
	alphabet := []string{"a", "\r", "\n", "\r\n", " "}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(10) {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		if got, want := splitLines(sb.String()), old(sb.String()); !slices.Equal(got, want) {
			t.Fatalf("splitLines(%q) = %q, want %q", sb.String(), got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := splitLinesCtx(ctx, "a\nb"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled split: %v", err)
	}
}
