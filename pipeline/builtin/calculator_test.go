package builtin

import (
	"math"
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	cases := []struct {
		expr string
		want float64
	}{
		{"1+2", 3},
		{"2+3*4", 14},
		{"(2+3)*4", 20},
		{"10-4-3", 3},
		{"100/10/5", 2},
		{"7 % 3", 1},
		{"-7 % 3", -1},
		{"2^3^2", 512},
		{"-2^2", -4},
		{"(-2)^2", 4},
		{"2^-1", 0.5},
		{"--3", 3},
		{"+4", 4},
		{"3 * -2", -6},
		{"1.5 + .5", 2},
		{"1e3 + 2.5E-1", 1000.25},
		{"sqrt(16) + abs(-3)", 7},
		{"min(4, 2, 8) + max(1, 9)", 11},
		{"round(2.5)", 3},
		{"round(-2.5)", -3},
		{"round(1.005, 2)", 1.01},
		{"round(1234.5678, 1)", 1234.6},
		{"round(1250, -2)", 1300},
		{"floor(2.7) + ceil(2.1)", 5},
		{"ln(e)", 1},
		{"log(1000)", 3},
		{"exp(0)", 1},
		{"2 * pi", 2 * math.Pi},
		{"PI", math.Pi},
		{" ( 1 + 2 ) * ( 3 + 4 ) ", 21},
		{"100 * (30 - 25) / 25", 20},
		{"0.1 + 0.2", 0.30000000000000004},
		{"-0", 0},
	}
	for _, c := range cases {
		got, err := Eval(c.expr)
		if err != nil {
			t.Errorf("Eval(%q): %v", c.expr, err)
			continue
		}
		if math.Abs(got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("Eval(%q) = %v, want %v", c.expr, got, c.want)
		}
		if math.Signbit(got) && got == 0 {
			t.Errorf("Eval(%q) = -0", c.expr)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	cases := []struct {
		expr, code string
	}{
		{"1/0", CodeDivisionByZero},
		{"5 % 0", CodeDivisionByZero},
		{"1/(2-2)", CodeDivisionByZero},
		{"0^-1", CodeDivisionByZero},
		{"sqrt(-1)", CodeDomain},
		{"ln(0)", CodeDomain},
		{"(-8)^(1/3)", CodeDomain},
		{"10^400", CodeDomain}, // overflows to +Inf
		{"", CodeBadExpression},
		{"1+", CodeBadExpression},
		{"(1+2", CodeBadExpression},
		{"1+2)", CodeBadExpression},
		{"2 3", CodeBadExpression},
		{"1..2", CodeBadExpression},
		{".", CodeBadExpression},
		{"foo(1)", CodeBadExpression},
		{"x + 1", CodeBadExpression},
		{"sqrt", CodeBadExpression},
		{"sqrt(1, 2)", CodeBadExpression},
		{"max()", CodeBadExpression},
		{"round(1.5, 0.5)", CodeDomain},
		{"1 $ 2", CodeBadExpression},
		{"os.exit(1)", CodeBadExpression},
		{`__import__("os")`, CodeBadExpression},
		{"2 × 3", CodeBadExpression},
		{strings.Repeat("(", 500) + "1" + strings.Repeat(")", 500), CodeBadExpression},
		{strings.Repeat("-", 1000) + "1", CodeBadExpression},
	}
	for _, c := range cases {
		_, err := Eval(c.expr)
		if got := rejectCode(err); got != c.code {
			t.Errorf("Eval(%q): error %v (code %q), want code %q", c.expr, err, got, c.code)
		}
	}
}

func TestEvalErrorMessageHasPosition(t *testing.T) {
	_, err := Eval("1 + 2 * (3 - 4")
	if err == nil || !strings.Contains(err.Error(), "position") {
		t.Fatalf("want a message with the position, got %v", err)
	}
	_, err = Eval("1 / 0")
	if err == nil || !strings.Contains(err.Error(), "position 3") {
		t.Fatalf("want division by zero at position 3, got %v", err)
	}
}

func TestCalculatorHandler(t *testing.T) {
	tools := testTools(t, nil)
	out, err := invoke(t, tools["calculator"], "anyone", map[string]any{"expression": "(12.5 + 7) * 3"})
	if err != nil {
		t.Fatal(err)
	}
	r := decode[calculatorResult](t, out)
	if r.Result != 58.5 || r.Text != "58.5" {
		t.Fatalf("got %+v", r)
	}
	_, err = invoke(t, tools["calculator"], "anyone", map[string]any{"expression": "1/0"})
	if rejectCode(err) != CodeDivisionByZero {
		t.Fatalf("1/0: %v", err)
	}
	_, err = invoke(t, tools["calculator"], "anyone", map[string]any{"expr": "1"})
	if rejectCode(err) != CodeBadParams {
		t.Fatalf("unknown field: %v", err)
	}
}

func FuzzEval(f *testing.F) {
	for _, s := range []string{"1+2", "-(3^2)%4", "round(1.005, 2)", "max(1,2,3)/min(4,5)", "((((1))))", "1e308*10", "2^-1074"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Eval(s)
		if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Fatalf("Eval(%q) = %v without error", s, v)
		}
		if err != nil && rejectCode(err) == "" {
			t.Fatalf("Eval(%q): error %v is not a ProviderRejected", s, err)
		}
	})
}

// A result's text reads as a person writes the number: binary rounding
// noise is not shown, whole numbers and large values are in full.
func TestCalculatorTextIsReadable(t *testing.T) {
	tools := testTools(t, nil)
	for expr, want := range map[string]string{
		"(18 / 100 * 240)": "43.2",
		"0.1 + 0.2":        "0.3",
		"1 / 3":            "0.333333333333",
		"123456789012345":  "123456789012345",
		"2 ^ 40":           "1099511627776",
		"-7 / 4":           "-1.75",
	} {
		out, err := invoke(t, tools["calculator"], "anyone", map[string]any{"expression": expr})
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if r := decode[calculatorResult](t, out); r.Text != want {
			t.Errorf("%s: text %q, want %q (result %v)", expr, r.Text, want, r.Result)
		}
	}
}
