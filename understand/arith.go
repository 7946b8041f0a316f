package understand

import (
	"strconv"
	"strings"

	"github.com/airs-dev/airs/pipeline/builtin"
)

// Arithmetic as people say it becomes an expression in the calculator's
// grammar (builtin.Eval): "what's 12% of 350" → "12 / 100 * 350", "sum 12
// and 30" → "(12 + 30)", "square root of 1764" → "sqrt(1764)". The words
// are rewritten in place, operand by operand, until nothing changes; the
// longest run of the result that is an expression the calculator parses,
// with at least one operator or function, is the value. A bare number, a
// date or an id is not arithmetic.

var smallNumbers = map[string]int{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
	"fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
	"nineteen": 19,
}

var tens = map[string]int{
	"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
	"eighty": 80, "ninety": 90,
}

var scales = map[string]int{"hundred": 100, "thousand": 1000, "million": 1000000}

// NumbersInWords replaces numbers written in words ("twenty five", "three
// hundred and twelve", "a dozen") by digits; other words are kept.
func NumbersInWords(s string) string {
	words := strings.Fields(s)
	var out []string
	for i := 0; i < len(words); {
		v, n := readNumber(words[i:])
		if n == 0 {
			out = append(out, words[i])
			i++
			continue
		}
		// Keep the punctuation that ended the last word of the number.
		last := words[i+n-1]
		trail := last[len(strings.TrimRight(last, ",.?!;:")):]
		out = append(out, strconv.Itoa(v)+trail)
		i += n
	}
	return strings.Join(out, " ")
}

func bare(w string) string { return strings.ToLower(strings.TrimRight(w, ",.?!;:")) }

// readNumber reads one number in words at the start of ws: its value and
// how many words it took (0: none).
func readNumber(ws []string) (int, int) {
	total, cur, n := 0, 0, 0
	seen := false
	for n < len(ws) {
		w := bare(ws[n])
		if strings.Contains(w, "-") { // twenty-five
			a, b, _ := strings.Cut(w, "-")
			if t, ok := tens[a]; ok {
				if u, ok := smallNumbers[b]; ok && u < 10 {
					cur += t + u
					seen = true
					n++
					continue
				}
			}
			break
		}
		if v, ok := smallNumbers[w]; ok {
			if w == "one" && !seen && n+1 < len(ws) && scales[bare(ws[n+1])] == 0 {
				// "one" alone is often a pronoun ("which one"): a number only before a scale.
				break
			}
			cur += v
		} else if v, ok := tens[w]; ok {
			cur += v
		} else if v, ok := scales[w]; ok && seen {
			if v == 100 {
				cur *= v
			} else {
				total += cur * v
				cur = 0
			}
		} else if w == "dozen" && !seen {
			cur, seen, n = 12, true, n+1
			break
		} else if w == "and" && seen && n+1 < len(ws) {
			if _, ok := smallNumbers[bare(ws[n+1])]; ok {
				n++
				continue
			}
			if _, ok := tens[bare(ws[n+1])]; ok {
				n++
				continue
			}
			break
		} else {
			break
		}
		seen = true
		if strings.ContainsAny(ws[n], ",.?!;:") {
			n++
			break
		}
		n++
	}
	if !seen {
		return 0, 0
	}
	// A trailing "and" was not part of the number.
	for n > 0 && bare(ws[n-1]) == "and" {
		n--
	}
	return total + cur, n
}

const operand = `(-?\d+(?:\.\d+)?|\([^()]*\)|sqrt\([^()]*\))`

// list is two or more operands: "3, 4 and 5".
const list = operand + `((?:\s*,\s*` + operand + `)*\s*(?:,\s*)?(?:and|&|\+)\s*` + operand + `)`

type rewrite struct {
	re  Pattern
	fn  func(m []string) string
	raw string
}

func rw(pattern string, fn func(m []string) string) rewrite {
	return rewrite{re: MustPattern(`(?i)` + pattern), fn: fn, raw: pattern}
}

var reOperand = MustPattern(operand)

// operands splits a list ("3, 4 and 5") into its operands.
func operands(s string) []string { return reOperand.FindAllString(s, -1) }

func joinOps(ops []string, op string) string { return "(" + strings.Join(ops, " "+op+" ") + ")" }

var rewrites = []rewrite{
	rw(`\bsquare\s+root\s+of\s+`+operand, func(m []string) string { return "sqrt(" + m[1] + ")" }),
	rw(`\bsqrt\s+(?:of\s+)?(-?\d+(?:\.\d+)?)`, func(m []string) string { return "sqrt(" + m[1] + ")" }),
	rw(`\bcube\s+root\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " ^ (1 / 3))" }),
	rw(operand+`\s*(?:%|percent|per\s*cent)\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " / 100 * " + m[2] + ")" }),
	// "a 20% tip on 86", "15% tax on 40": the share named is of the amount.
	rw(operand+`\s*(?:%|percent|per\s*cent)\s+(?:tip|tax|vat|gratuity|commission|fee|interest|surcharge|service\s+charge|deposit|down\s+payment)\s+(?:on|for|of)\s+(?:an?\s+|the\s+)?`+operand, func(m []string) string { return "(" + m[1] + " / 100 * " + m[2] + ")" }),
	// "1500 plus 20 percent", "80 minus 15%": the percent is of the amount.
	rw(operand+`\s+(?:plus|\+)\s+`+operand+`\s*(?:%|percent|per\s*cent)`, func(m []string) string { return "(" + m[1] + " * (1 + " + m[2] + " / 100))" }),
	rw(operand+`\s+(?:minus|less|-)\s+`+operand+`\s*(?:%|percent|per\s*cent)`, func(m []string) string { return "(" + m[1] + " * (1 - " + m[2] + " / 100))" }),
	rw(`\b(?:the\s+)?(?:average|mean)\s+(?:of\s+)?`+list, func(m []string) string {
		ops := operands(m[0][strings.Index(strings.ToLower(m[0]), "of")+2:])
		if !strings.Contains(strings.ToLower(m[0]), " of") {
			ops = operands(m[0])
		}
		return "(" + joinOps(ops, "+") + " / " + strconv.Itoa(len(ops)) + ")"
	}),
	rw(`\b(?:the\s+)?(?:sum|total)\s+(?:of\s+)?`+list, func(m []string) string { return joinOps(operands(m[0]), "+") }),
	rw(`\b(?:add(?:\s+up)?|sum\s+up)\s+`+list, func(m []string) string { return joinOps(operands(m[0]), "+") }),
	rw(`\badd\s+`+operand+`\s+to\s+`+operand, func(m []string) string { return "(" + m[2] + " + " + m[1] + ")" }),
	rw(`\b(?:the\s+)?product\s+of\s+`+list, func(m []string) string { return joinOps(operands(m[0]), "*") }),
	rw(`\bmultiply\s+`+list, func(m []string) string { return joinOps(operands(m[0]), "*") }),
	rw(`\bmultiply\s+`+operand+`\s+(?:by|times|with)\s+`+operand, func(m []string) string { return "(" + m[1] + " * " + m[2] + ")" }),
	rw(`\b(?:subtract|take(?:\s+away)?|deduct)\s+`+operand+`\s+from\s+`+operand, func(m []string) string { return "(" + m[2] + " - " + m[1] + ")" }),
	rw(`\btake\s+`+operand+`\s+away\s+from\s+`+operand, func(m []string) string { return "(" + m[2] + " - " + m[1] + ")" }),
	rw(`\b(?:the\s+)?difference\s+between\s+`+operand+`\s+and\s+`+operand, func(m []string) string { return "(" + m[1] + " - " + m[2] + ")" }),
	rw(`\bdivide\s+`+operand+`\s+(?:by|into)\s+`+operand, func(m []string) string {
		if strings.Contains(strings.ToLower(m[0]), " into ") {
			return "(" + m[2] + " / " + m[1] + ")"
		}
		return "(" + m[1] + " / " + m[2] + ")"
	}),
	rw(`\b(?:half|a\s+half)\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " / 2)" }),
	rw(`\b(?:a\s+)?(?:third)\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " / 3)" }),
	rw(`\b(?:a\s+)?(?:quarter)\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " / 4)" }),
	rw(`\b(?:double|twice)\s+`+operand, func(m []string) string { return "(" + m[1] + " * 2)" }),
	rw(`\btriple\s+`+operand, func(m []string) string { return "(" + m[1] + " * 3)" }),
	rw(operand+`\s+squared\b`, func(m []string) string { return "(" + m[1] + " ^ 2)" }),
	rw(operand+`\s+cubed\b`, func(m []string) string { return "(" + m[1] + " ^ 3)" }),
	rw(`\b(?:the\s+)?square\s+of\s+`+operand, func(m []string) string { return "(" + m[1] + " ^ 2)" }),
	rw(operand+`\s+(?:to\s+the\s+power\s+(?:of\s+)?|raised\s+to\s+(?:the\s+power\s+(?:of\s+)?)?|to\s+the\s+)`+operand+`(?:th|st|nd|rd)?(?:\s+power)?`, func(m []string) string { return "(" + m[1] + " ^ " + m[2] + ")" }),
	rw(operand+`\s+(?:multiplied\s+by|times|x|×)\s+`+operand, func(m []string) string { return m[1] + " * " + m[2] }),
	rw(operand+`\s+(?:divided\s+by|over|÷)\s+`+operand, func(m []string) string { return m[1] + " / " + m[2] }),
	rw(operand+`\s+(?:plus|and)\s+`+operand, func(m []string) string { return m[1] + " + " + m[2] }),
	rw(operand+`\s+(?:minus|less)\s+`+operand, func(m []string) string { return m[1] + " - " + m[2] }),
	rw(operand+`\s*(?:%|percent)\s+(?:off|discount\s+on)\s+`+operand, func(m []string) string { return "(" + m[2] + " * (1 - " + m[1] + " / 100))" }),
}

// reCalcSpan is a run of what the calculator reads.
var reCalcSpan = MustPattern(`(?:sqrt\(|\(|-)?[\d.(][\d.\s+\-*/^()sqrt]*[\d)]`)

// opWords mark a rewrite that needs an operator word between operands
// ("plus", "and"): "and" alone makes one only next to an arithmetic verb.
var reArithCue = MustPattern(`(?i)\b(?:sum|add|plus|minus|times|multipl\w*|divid\w*|subtract|product|average|mean|total|squared|cubed|square|root|power|percent|difference|calculate|compute|what'?s|what\s+is|how\s+much|half|double|twice|triple|quarter|third|deduct|take|sqrt)\b|%|[-+*/^×÷]|\d\s*x\s*\d`)

// Expression is the arithmetic a request states, in the calculator's
// grammar, or "" when it states none.
func Expression(text string) string { return expression(text, Env{}) }

// expression is Expression, giving way at env's checkpoints.
func expression(text string, env Env) string {
	if !reArithCue.MatchString(text) {
		return ""
	}
	s := NumbersInWords(text)
	s = strings.NewReplacer("×", "*", "÷", "/", ",000", "000").Replace(s)
	s = cachedPattern(`(\d),(\d{3})\b`).ReplaceAllString(s, "$1$2")
	s = cachedPattern(`\$(\d)`).ReplaceAllString(s, "$1")
	for i := 0; i < 8; i++ {
		before := s
		t := &haystack{s: s}
		for _, r := range rewrites {
			if t.s != s {
				t = &haystack{s: s}
			}
			if !r.re.pre.may(t) {
				continue // what it needs is not in the text: it cannot match
			}
			env.yield()
			if r.raw == operand+`\s+(?:plus|and)\s+`+operand && !cachedPattern(`(?i)\bplus\b`).MatchString(s) {
				// "and" joins operands only where "plus" is meant: "12 and 30"
				// is a sum only inside "sum/add …" (handled above).
				s = r.re.ReplaceAllStringFunc(s, func(m string) string {
					if !cachedPattern(`(?i)\bplus\b`).MatchString(m) {
						return m
					}
					return r.fn(r.re.FindStringSubmatch(m))
				})
				continue
			}
			s = r.re.ReplaceAllStringFunc(s, func(m string) string { return r.fn(r.re.FindStringSubmatch(m)) })
		}
		if s == before {
			break
		}
	}
	best := ""
	for _, m := range reCalcSpan.FindAllString(s, -1) {
		m = strings.TrimSpace(trimUnbalanced(m))
		if !strings.ContainsAny(m, "+*/^") && !strings.Contains(m, "sqrt") && !strings.Contains(strings.TrimPrefix(m, "-"), "-") {
			continue
		}
		if strings.Trim(m, "0123456789-. ") == "" && !strings.Contains(m, " - ") {
			continue // a date or an id like 2024-01-05
		}
		if _, err := builtin.Eval(m); err != nil {
			continue
		}
		if len(m) > len(best) {
			best = m
		}
	}
	return best
}

// trimUnbalanced drops parentheses a span cut through.
func trimUnbalanced(s string) string {
	for {
		open, close := strings.Count(s, "("), strings.Count(s, ")")
		switch {
		case open > close && strings.HasPrefix(s, "("):
			s = s[1:]
		case close > open && strings.HasSuffix(s, ")"):
			s = s[:len(s)-1]
		default:
			return s
		}
	}
}

// IsExpression reports whether s is an expression the calculator reads.
func IsExpression(s string) bool {
	_, err := builtin.Eval(s)
	return err == nil && strings.TrimSpace(s) != ""
}
