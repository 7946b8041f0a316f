package understand

import (
	"encoding/json"
	"testing"
)

func TestAsksFor(t *testing.T) {
	for _, c := range []struct {
		request, tool string
		want          bool
		params        json.RawMessage
	}{
		{"What is the best way to boil an egg?", "get_cooking_time", false, nil},
		{"How long do I cook a 2 kg turkey?", "get_cooking_time", true, nil},
		{"Search for divorce law specialists in Los Angeles", "lawyer.search", true, nil},
		{"Search for divorce law specialists in Los Angeles", "doctor.search", false, nil},
		{"Who are in the cricket matches scheduled for today?", "sports_analyzer.get_schedule", true, nil},
		{"Find the intersection points of y=3x+2 and y=2x+3", "functions.intersect", true, nil},
		// A kind of value the name says: a date for "when", a currency for money.
		{"When was the signing of the Treaty of Lisbon?", "get_event_date", true, nil},
		{"I have 100 euro. How much is it in USD?", "currency_conversion", true, nil},
		{"I have 100 apples. How many are left?", "currency_conversion", false, nil},
		// A unit after a number is a value's kind, not the subject.
		{"the field at 8 meters from a current of 12 Amperes", "electromagnetism.ampere_law", false, nil},
		// A name of verbs only asks nothing.
		{"anything at all", "get.fetch", true, nil},
		// A value the tool takes (its enum) asks for it, however it is named.
		{"set the air conditioner to cool mode", "ThinQ_Connect", true, json.RawMessage(`{"properties":{"mode":{"type":"string","enum":["COOL","HEAT","DRY"]}}}`)},
		{"set the air conditioner to eco mode", "ThinQ_Connect", false, json.RawMessage(`{"properties":{"mode":{"type":"string","enum":["COOL","HEAT","DRY"]}}}`)},
	} {
		if got := AsksFor(c.request, c.tool, c.params); got != c.want {
			t.Errorf("AsksFor(%q, %s) = %v, want %v (subjects %v)", c.request, c.tool, got, c.want, Subjects(c.tool))
		}
	}
}

func TestUnfilled(t *testing.T) {
	num := json.RawMessage(`{"type":"object","properties":{"current_emissions":{"type":"number"},"action":{"type":"string"}},"required":["current_emissions","action"]}`)
	price := json.RawMessage(`{"type":"object","properties":{"price":{"type":"number","description":"The original price."},"discount_rate":{"type":"number","description":"The discount rate."}},"required":["price","discount_rate"]}`)
	list := json.RawMessage(`{"type":"object","properties":{"answers":{"type":"array","items":{"type":"integer"}}},"required":["answers"]}`)
	place := json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)
	when := json.RawMessage(`{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`)
	deflt := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","default":3}},"required":["n"]}`)
	for _, c := range []struct {
		request string
		schema  json.RawMessage
		want    string
	}{
		{"What is the best way to reduce CO2 emissions?", num, "current_emissions"}, // CO2 is a name
		{"We emit 40 tonnes a year; what if we cycle?", num, ""},
		{"the price after a 25% discount and 10% tax", price, "price"}, // only rates
		{"the price of a $80 shirt after a 25% discount", price, ""},
		{"What type of personality am I?", list, "answers"},
		{"my answers were 5, 3, 4 and 2", list, ""},
		{"what's the weather like", place, "location"},
		{"what's the weather like in Boston", place, ""},
		{"what is on the agenda", when, "date"},
		{"what is on the agenda tomorrow", when, ""},
		{"anything", deflt, ""}, // a default needs nothing from the request
	} {
		if got := Unfilled(c.request, c.schema); got != c.want {
			t.Errorf("Unfilled(%q) = %q, want %q", c.request, got, c.want)
		}
	}
}
