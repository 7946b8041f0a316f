package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/pipeline"
)

// CalculatorTool describes the calculator.
func CalculatorTool() pipeline.Tool {
	return pipeline.Tool{
		Name:    "calculator",
		Version: "1.0.0",
		Description: "Evaluate an arithmetic expression and return the number. " +
			"Supports + - * / % ^ (power), parentheses, unary minus, decimals and 1e3 notation, " +
			"the constants pi and e, and the functions sqrt, abs, min, max, round, floor, ceil, ln, log, exp. " +
			"Use it to add, subtract, multiply or divide numbers, compute percentages, totals, averages or differences, " +
			"e.g. \"(12.5 + 7) * 3\" or \"round(100 * 19 / 23, 1)\".",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"expression": {"type": "string", "minLength": 1, "maxLength": 1000,
					"description": "The arithmetic expression, e.g. \"2 * (3 + 4) ^ 2\"."}
			},
			"required": ["expression"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"expression": {"type": "string"},
				"result": {"type": "number"},
				"text": {"type": "string"}
			},
			"required": ["expression", "result", "text"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Instant,
		Idempotent:   true,
		ReadOnly:     true,
	}
}

type calculatorParams struct {
	Expression string `json:"expression"`
}

type calculatorResult struct {
	Expression string  `json:"expression"`
	Result     float64 `json:"result"`
	Text       string  `json:"text"`
}

// Calculator is the calculator's handler.
func Calculator() pipeline.Handler {
	return pipeline.HandlerFunc(func(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
		var p calculatorParams
		if err := decodeParams(ctx, params, &p); err != nil {
			return nil, err
		}
		v, err := Eval(p.Expression)
		if err != nil {
			return nil, err
		}
		return result(calculatorResult{Expression: p.Expression, Result: v, Text: readableNumber(v)})
	})
}

// readableNumber is v as a person reads it: a fraction to 12 significant
// digits, so binary rounding noise (18% of 240 = 43.199999999999996) reads
// as 43.2; whole numbers in full. Result keeps the exact value.
func readableNumber(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if v == math.Trunc(v) || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 12, 64)
}

// Eval evaluates an arithmetic expression. It is a small recursive-descent
// parser that evaluates as it parses; nothing but numbers, operators, the
// listed functions and constants is understood. The grammar, loosest
// binding first:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ "^" unary ]          (right-associative: 2^3^2 = 2^9)
//	primary = number | name | name "(" expr { "," expr } ")" | "(" expr ")"
//
// so -2^2 = -4 and 2^-1 = 0.5, as in mathematics. Errors are *RejectError
// with code bad_expression (with the byte offset), division_by_zero or
// domain_error.
func Eval(expr string) (float64, error) {
	p := &calc{src: expr}
	p.next()
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.tok.kind != tEOF {
		return 0, p.errorf("unexpected %s", p.tok)
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, reject(CodeDomain, "the result of %q is not a finite number", expr)
	}
	if v == 0 {
		v = 0 // no -0 in results
	}
	return v, nil
}

type tokKind int

const (
	tEOF tokKind = iota
	tNum
	tName
	tOp // one of + - * / % ^ ( ) ,
	tBad
)

type token struct {
	kind tokKind
	pos  int
	text string
	num  float64
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tNum, tName:
		return fmt.Sprintf("%q at position %d", t.text, t.pos+1)
	default:
		return fmt.Sprintf("%q at position %d", t.text, t.pos+1)
	}
}

// maxDepth bounds nesting so a hostile "((((…" cannot exhaust the stack.
const maxDepth = 200

type calc struct {
	src   string
	off   int
	tok   token
	depth int
}

func (p *calc) errorf(format string, args ...any) error {
	return reject(CodeBadExpression, "%s in %q", fmt.Sprintf(format, args...), p.src)
}

func (p *calc) next() {
	s := p.src
	for p.off < len(s) && (s[p.off] == ' ' || s[p.off] == '\t' || s[p.off] == '\n' || s[p.off] == '\r') {
		p.off++
	}
	start := p.off
	if p.off >= len(s) {
		p.tok = token{kind: tEOF, pos: start}
		return
	}
	c := s[p.off]
	switch {
	case c >= '0' && c <= '9' || c == '.':
		for p.off < len(s) && (s[p.off] >= '0' && s[p.off] <= '9' || s[p.off] == '.') {
			p.off++
		}
		// exponent: 1e3, 2.5E-4 (only if digits follow)
		if p.off < len(s) && (s[p.off] == 'e' || s[p.off] == 'E') {
			j := p.off + 1
			if j < len(s) && (s[j] == '+' || s[j] == '-') {
				j++
			}
			if j < len(s) && s[j] >= '0' && s[j] <= '9' {
				for j < len(s) && s[j] >= '0' && s[j] <= '9' {
					j++
				}
				p.off = j
			}
		}
		text := s[start:p.off]
		v, err := strconv.ParseFloat(text, 64)
		if err != nil || strings.Count(text, ".") > 1 || text == "." {
			p.tok = token{kind: tBad, pos: start, text: text}
			return
		}
		p.tok = token{kind: tNum, pos: start, text: text, num: v}
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		for p.off < len(s) && (s[p.off] >= 'a' && s[p.off] <= 'z' || s[p.off] >= 'A' && s[p.off] <= 'Z' || s[p.off] == '_' || s[p.off] >= '0' && s[p.off] <= '9') {
			p.off++
		}
		p.tok = token{kind: tName, pos: start, text: s[start:p.off]}
	case strings.IndexByte("+-*/%^(),", c) >= 0:
		p.off++
		p.tok = token{kind: tOp, pos: start, text: s[start:p.off]}
	default:
		// report the whole rune, not a byte of it
		r := []rune(s[start:])[0]
		p.tok = token{kind: tBad, pos: start, text: string(r)}
		p.off += len(string(r))
	}
}

func (p *calc) isOp(op string) bool { return p.tok.kind == tOp && p.tok.text == op }

func (p *calc) expr() (float64, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return 0, p.errorf("expression nested deeper than %d levels", maxDepth)
	}
	v, err := p.term()
	if err != nil {
		return 0, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.tok.text
		p.next()
		w, err := p.term()
		if err != nil {
			return 0, err
		}
		if op == "+" {
			v += w
		} else {
			v -= w
		}
	}
	return v, nil
}

func (p *calc) term() (float64, error) {
	v, err := p.unary()
	if err != nil {
		return 0, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("%") {
		op := p.tok
		p.next()
		w, err := p.unary()
		if err != nil {
			return 0, err
		}
		switch op.text {
		case "*":
			v *= w
		case "/":
			if w == 0 {
				return 0, reject(CodeDivisionByZero, "division by zero at position %d in %q", op.pos+1, p.src)
			}
			v /= w
		case "%":
			if w == 0 {
				return 0, reject(CodeDivisionByZero, "modulo by zero at position %d in %q", op.pos+1, p.src)
			}
			v = math.Mod(v, w)
		}
	}
	return v, nil
}

func (p *calc) unary() (float64, error) {
	if p.isOp("-") || p.isOp("+") {
		neg := p.tok.text == "-"
		p.depth++
		defer func() { p.depth-- }()
		if p.depth > maxDepth {
			return 0, p.errorf("expression nested deeper than %d levels", maxDepth)
		}
		p.next()
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *calc) power() (float64, error) {
	base, err := p.primary()
	if err != nil {
		return 0, err
	}
	if !p.isOp("^") {
		return base, nil
	}
	op := p.tok
	p.next()
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	if base == 0 && exp < 0 {
		return 0, reject(CodeDivisionByZero, "0 raised to a negative power at position %d in %q", op.pos+1, p.src)
	}
	v := math.Pow(base, exp)
	if math.IsNaN(v) {
		return 0, reject(CodeDomain, "%g ^ %g is not a real number (position %d in %q)", base, exp, op.pos+1, p.src)
	}
	return v, nil
}

var constants = map[string]float64{"pi": math.Pi, "e": math.E}

type function struct {
	minArgs, maxArgs int // maxArgs < 0: variadic
	fn               func(args []float64) (float64, string)
}

// functions: fn returns the value, or a non-empty domain complaint.
var functions = map[string]function{
	"sqrt": {1, 1, func(a []float64) (float64, string) {
		if a[0] < 0 {
			return 0, "sqrt of a negative number"
		}
		return math.Sqrt(a[0]), ""
	}},
	"abs":   {1, 1, func(a []float64) (float64, string) { return math.Abs(a[0]), "" }},
	"floor": {1, 1, func(a []float64) (float64, string) { return math.Floor(a[0]), "" }},
	"ceil":  {1, 1, func(a []float64) (float64, string) { return math.Ceil(a[0]), "" }},
	"exp":   {1, 1, func(a []float64) (float64, string) { return math.Exp(a[0]), "" }},
	"ln": {1, 1, func(a []float64) (float64, string) {
		if a[0] <= 0 {
			return 0, "ln of a number that is not positive"
		}
		return math.Log(a[0]), ""
	}},
	"log": {1, 1, func(a []float64) (float64, string) {
		if a[0] <= 0 {
			return 0, "log of a number that is not positive"
		}
		return math.Log10(a[0]), ""
	}},
	"min": {1, -1, func(a []float64) (float64, string) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Min(m, x)
		}
		return m, ""
	}},
	"max": {1, -1, func(a []float64) (float64, string) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Max(m, x)
		}
		return m, ""
	}},
	// round(x) rounds half away from zero; round(x, n) keeps n decimals.
	"round": {1, 2, func(a []float64) (float64, string) {
		if len(a) == 1 {
			return math.Round(a[0]), ""
		}
		n := a[1]
		if n != math.Trunc(n) || n < -15 || n > 15 {
			return 0, "round's second argument must be a whole number of decimals between -15 and 15"
		}
		if n >= 0 {
			// x*10^n carries binary error (1.005*100 = 100.4999…); rounding it
			// to 9 decimals first makes decimal halves round away from zero,
			// as people expect: round(1.005, 2) = 1.01.
			scale := math.Pow(10, n)
			d, _ := strconv.ParseFloat(strconv.FormatFloat(a[0]*scale, 'f', 9, 64), 64)
			return math.Round(d) / scale, ""
		}
		scale := math.Pow(10, -n)
		return math.Round(a[0]/scale) * scale, ""
	}},
}

func (p *calc) primary() (float64, error) {
	t := p.tok
	switch t.kind {
	case tNum:
		p.next()
		return t.num, nil
	case tName:
		p.next()
		name := strings.ToLower(t.text)
		if p.isOp("(") {
			f, ok := functions[name]
			if !ok {
				return 0, p.errorf("unknown function %s; known: sqrt, abs, min, max, round, floor, ceil, ln, log, exp", t)
			}
			p.next()
			var args []float64
			if !p.isOp(")") {
				for {
					v, err := p.expr()
					if err != nil {
						return 0, err
					}
					args = append(args, v)
					if !p.isOp(",") {
						break
					}
					p.next()
				}
			}
			if !p.isOp(")") {
				return 0, p.errorf("expected \")\" or \",\" in the call of %s, found %s", name, p.tok)
			}
			p.next()
			if len(args) < f.minArgs || f.maxArgs >= 0 && len(args) > f.maxArgs {
				return 0, p.errorf("%s takes %s, got %d", name, arity(f), len(args))
			}
			v, complaint := f.fn(args)
			if complaint != "" {
				return 0, reject(CodeDomain, "%s (position %d in %q)", complaint, t.pos+1, p.src)
			}
			return v, nil
		}
		if v, ok := constants[name]; ok {
			return v, nil
		}
		if _, ok := functions[name]; ok {
			return 0, p.errorf("function %s needs parentheses, e.g. %s(2)", t, name)
		}
		return 0, p.errorf("unknown name %s; constants are pi and e", t)
	case tOp:
		if t.text == "(" {
			p.next()
			v, err := p.expr()
			if err != nil {
				return 0, err
			}
			if !p.isOp(")") {
				return 0, p.errorf("expected \")\" to close \"(\" at position %d, found %s", t.pos+1, p.tok)
			}
			p.next()
			return v, nil
		}
		return 0, p.errorf("unexpected %s", t)
	case tBad:
		return 0, p.errorf("invalid character or number %s", t)
	default:
		return 0, p.errorf("expression ends too early")
	}
}

func arity(f function) string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d argument(s)", f.minArgs)
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d argument(s)", f.minArgs)
	default:
		return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
	}
}
