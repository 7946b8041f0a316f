package understand

import "testing"

// A format's name in capitals ("as JSON") is no proper name: a request
// that names no place but a format names no place.
func TestFormatIsNoPlace(t *testing.T) {
	for text, want := range map[string]bool{
		"give it as JSON with city":            false,
		"export the totals in CSV format":      false,
		"what is the weather in Paris as JSON": true,
		"flights to NYC":                       true,
	} {
		if got := NamesPlace(text); got != want {
			t.Errorf("NamesPlace(%q) = %v, want %v", text, got, want)
		}
	}
}

// A part that only says how to give the answer is no task; one that asks
// for something in a format, or converts to one, is.
func TestOnlyFormat(t *testing.T) {
	for part, want := range map[string]bool{
		"give it as JSON with city":             true,
		"as JSON":                               true,
		"return the results in CSV format":      true,
		"in JSON please":                        true,
		"give me the forecast for Rome as JSON": false,
		"convert notes.md to HTML":              false,
		"read budget.csv":                       false,
		"save it as report.pdf":                 false,
	} {
		if got := OnlyFormat(part); got != want {
			t.Errorf("OnlyFormat(%q) = %v, want %v", part, got, want)
		}
	}
	if got := WithoutFormat("the forecast for Rome as JSON"); got != "the forecast for Rome  " {
		t.Errorf("WithoutFormat = %q", got)
	}
}
