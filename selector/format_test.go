package selector_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/selector"
)

var weatherTool = pipeline.Tool{Name: "weather.get_forecast", Version: "1.0.0",
	Description: "Get the weather forecast (temperature, rain, wind) for a city for the next days.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"The city, e.g. Lisbon."},` +
		`"days":{"type":"integer","minimum":1,"maximum":10,"default":3}},"required":["city"],"additionalProperties":false}`),
	ReadOnly: true, Idempotent: true}

// A format word is never a place value: asking for the answer as JSON
// neither fills city="JSON", nor makes a step of its own, nor counts
// against the request's fit; with no city named, nothing is called.
func TestFormatWordIsNoPlace(t *testing.T) {
	args, missing, err := selector.ExtractArgumentsReport(weatherTool.Parameters, "give it as JSON with city", selector.Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if args["city"] == "JSON" || !slices.Contains(missing, "city") {
		t.Errorf("extracted %v, missing %v: want city missing, never JSON", args, missing)
	}
	if got := selector.SplitParts("what is the weather in Paris? give it as JSON with city"); len(got) != 1 {
		t.Errorf("parts %q: the format is no part of its own", got)
	}
	s, cat := understoodSelector(t, t.TempDir(), weatherTool)
	ctx := context.Background()
	for q, want := range map[string]string{
		"what is the weather in Paris? give it as JSON with city": "Paris",
		"give me the forecast for Rome as JSON":                   "Rome",
		"give it as JSON with city":                               "",
	} {
		pr, err := s.Plan(ctx, "me", q, cat)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		steps := stepsOf(t, pr)
		if want == "" {
			if len(steps) != 0 {
				t.Errorf("%q: planned %v, want nothing (no city named)", q, steps)
			}
			continue
		}
		if len(steps) != 1 || steps[0].Function != weatherTool.Name || steps[0].Arguments["city"] != want {
			t.Errorf("%q: planned %v, want one forecast for %s", q, steps, want)
		}
	}
}

// A part whose required text neither its words nor a step before give is
// no step: never a call with an empty value ("… then tell me the
// forecast" names no city of its own).
func TestPartWithoutValueGetsNoStep(t *testing.T) {
	s, cat := understoodSelector(t, t.TempDir(), weatherTool)
	pr, err := s.Plan(context.Background(), "me", "what is the weather in Paris? then tell me the forecast", cat)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range stepsOf(t, pr) {
		if city, _ := st.Arguments["city"].(string); st.Function == weatherTool.Name && city == "" {
			t.Errorf("planned %v: a forecast for no city", stepsOf(t, pr))
		}
	}
}
