package chat

// How a tool's result is shown to the person who asked: the answer, not
// the JSON it came in. The shape of the result says what it is — a value
// computed from an expression, a text read from a file, a listing of
// files, a comparison, a summary — so outside tools that give the same
// shapes are shown the same way; a result of no known shape is shown as
// JSON. The JSON of every result stays at hand: /json prints the last
// turn's, /json on shows every result as JSON (as --json does).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/understand"
)

// How much of a text, a listing or a diff is shown; /json has the rest.
const (
	showLines = 20
	showFiles = 50
	showDiff  = 40
	// answerLines bounds the lines quoted as the answer to a question.
	answerLines = 3
)

// present is out as a person reads it, or ok false when out has no shape
// present knows (then it is shown as JSON). request is what was asked: a
// question about a text gets the lines that answer it first.
func present(out json.RawMessage, request string) (string, bool) {
	var v any
	if json.Unmarshal(out, &v) != nil {
		return "", false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	var b strings.Builder
	switch {
	case isScalar(m["result"]):
		// A tool's own readable form of its number (the calculator's
		// "text": 43.2, not 43.199999999999996) is what a person reads.
		r := scalar(m["result"])
		if t, ok := m["text"].(string); ok && t != "" && isNumber(m["result"]) {
			r = t
		}
		if e, ok := m["expression"].(string); ok && e != "" {
			fmt.Fprintf(&b, "%s = %s\n", e, r)
		} else {
			fmt.Fprintf(&b, "%s\n", r)
		}
	case isFileList(m["files"]):
		presentFiles(&b, m)
	case isList(m["changes"]) && (isString(m["summary"]) || isString(m["diff"])):
		presentCompare(&b, m)
	case isString(m["summary"]):
		fmt.Fprintf(&b, "%s\n", strings.TrimSpace(m["summary"].(string)))
		if n, ok := m["note"].(string); ok && n != "" {
			fmt.Fprintf(&b, "(%s)\n", n)
		}
	case isString(m["text"]):
		presentText(&b, m, request)
	default:
		return "", false
	}
	return b.String(), true
}

func presentFiles(b *strings.Builder, m map[string]any) {
	files := m["files"].([]any)
	where := ""
	if sp, ok := m["space"].(string); ok && sp != "" {
		where = " in " + sp
		if d, ok := m["dir"].(string); ok && d != "" && d != "." {
			where += "/" + d
		}
	}
	switch len(files) {
	case 0:
		fmt.Fprintf(b, "no files%s\n", where)
		return
	case 1:
		fmt.Fprintf(b, "1 file%s:\n", where)
	default:
		fmt.Fprintf(b, "%d files%s:\n", len(files), where)
	}
	for i, f := range files {
		if i == showFiles {
			fmt.Fprintf(b, "  … %d more (/json shows them all)\n", len(files)-showFiles)
			break
		}
		fm := f.(map[string]any)
		name, _ := fm["path"].(string)
		if name == "" {
			name, _ = fm["name"].(string)
		}
		if t, _ := fm["type"].(string); t == "dir" || t == "directory" {
			name += "/"
		} else if sz, ok := fm["size"].(float64); ok {
			name += "  (" + humanSize(sz) + ")"
		}
		fmt.Fprintf(b, "  %s\n", name)
	}
	if t, _ := m["truncated"].(bool); t {
		fmt.Fprintf(b, "  (the listing was cut at its limit: ask for a narrower one)\n")
	}
}

func presentCompare(b *strings.Builder, m map[string]any) {
	if s, ok := m["summary"].(string); ok && s != "" {
		fmt.Fprintf(b, "%s\n", s)
	}
	if same, _ := m["identical"].(bool); same {
		return
	}
	if d, ok := m["diff"].(string); ok && d != "" {
		lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
		for i, l := range lines {
			if i == showDiff {
				fmt.Fprintf(b, "  … %d more lines of the diff (/json shows them all)\n", len(lines)-showDiff)
				break
			}
			fmt.Fprintf(b, "  %s\n", l)
		}
		return
	}
	for _, c := range m["changes"].([]any) {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		fmt.Fprintf(b, "  %v at line %s:", cm["kind"], scalar(cm["b_line"]))
		for _, l := range strs(cm["a"]) {
			fmt.Fprintf(b, " -%q", l)
		}
		for _, l := range strs(cm["b"]) {
			fmt.Fprintf(b, " +%q", l)
		}
		b.WriteString("\n")
	}
}

func presentText(b *strings.Builder, m map[string]any, request string) {
	text := strings.TrimRight(m["text"].(string), "\n")
	p, _ := m["path"].(string)
	lines := strings.Split(text, "\n")
	if p != "" {
		head := p
		if sp, ok := m["space"].(string); ok && sp != "" {
			head += " (space " + sp + ")"
		}
		if n, ok := m["num_pages"].(float64); ok {
			head += fmt.Sprintf(", %s page%s", strconv.Itoa(int(n)), plural(int(n)))
		}
		fmt.Fprintf(b, "%s, %d line%s:\n", head, len(lines), plural(len(lines)))
	}
	if ans := answerOf(text, request, p); len(ans) > 0 {
		b.WriteString("the lines that answer it:\n")
		for _, l := range ans {
			fmt.Fprintf(b, "  » %s\n", l)
		}
		b.WriteString("the text:\n")
	}
	shown := lines
	if len(shown) > showLines {
		shown = shown[:showLines]
	}
	for _, l := range shown {
		fmt.Fprintf(b, "  %s\n", l)
	}
	if cut := len(lines) - len(shown); cut > 0 {
		rest := len(strings.Join(lines[len(shown):], "\n"))
		fmt.Fprintf(b, "  … %d more line%s (%d characters) not shown; /json shows the whole result\n", cut, plural(cut), rest)
	}
	if t, _ := m["truncated"].(bool); t {
		b.WriteString("  (the tool cut the text at its size limit)\n")
	}
}

// answerOf are the lines (or sentences, in a long line) of text that say
// most of the words a question asks about, beyond the words that named
// the file: "what does the 2025 quote cost for the pro plan" over the
// quote's text is "Pro plan: $30 per month". None when request is no
// question or no line says any of its words.
func answerOf(text, request, file string) []string {
	if !understand.IsQuestion(request) {
		return nil
	}
	named := map[string]bool{}
	for _, w := range understand.Words(strings.NewReplacer("/", " ", "-", " ", "_", " ", ".", " ").Replace(file)) {
		named[w] = true
	}
	ask := map[string]bool{}
	for _, w := range understand.Words(request) {
		if !named[w] && len(w) > 1 {
			ask[w] = true
		}
	}
	if len(ask) == 0 {
		return nil
	}
	// Sentences: "Rent: 950 EUR a month. Deposit: 1,900 EUR." answers
	// "how much is the deposit" with its second sentence.
	var units []string
	for _, l := range strings.Split(text, "\n") {
		for _, s := range sentences(l) {
			if s = strings.TrimSpace(s); s != "" {
				units = append(units, s)
			}
		}
	}
	best, bestN := []string(nil), 0
	for _, u := range units {
		n := 0
		seen := map[string]bool{}
		for _, w := range understand.Words(u) {
			if ask[w] && !seen[w] {
				seen[w] = true
				n++
			}
		}
		switch {
		case n == 0 || n < bestN:
		case n > bestN:
			best, bestN = []string{u}, n
		case len(best) < answerLines:
			best = append(best, u)
		}
	}
	if len(best) == len(units) {
		return nil // the whole text: nothing to point at
	}
	return best
}

// sentences cuts a line after each full stop, question or exclamation mark
// that a space follows (so "$0.03" and "e.g." inside a word stay whole).
func sentences(l string) []string {
	var out []string
	for {
		loc := reSentenceEnd.FindStringIndex(l)
		if loc == nil {
			return append(out, l)
		}
		out = append(out, l[:loc[0]+1])
		l = l[loc[1]:]
	}
}

var reSentenceEnd = regexp.MustCompile(`[.!?]\s+`)

func isScalar(v any) bool {
	switch v.(type) {
	case float64, string, bool:
		return true
	}
	return false
}

func scalar(v any) string {
	switch x := v.(type) {
	case float64:
		if x == float64(int64(x)) && x < 1e15 && x > -1e15 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	case nil:
		return "?"
	}
	return fmt.Sprint(v)
}

func isNumber(v any) bool {
	_, ok := v.(float64)
	return ok
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// isFileList: a list of objects each with a path or a name.
func isFileList(v any) bool {
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, f := range l {
		m, ok := f.(map[string]any)
		if !ok || !isString(m["path"]) && !isString(m["name"]) {
			return false
		}
	}
	return true
}

func strs(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func humanSize(n float64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", n/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", n/(1<<10))
	}
	return fmt.Sprintf("%d bytes", int(n))
}
