package complete

import (
	"encoding/json"
	"strings"

	"github.com/airs-dev/airs/embeddings"
	"github.com/airs-dev/airs/understand"
)

// The words of a parameter's name that say it takes a place, or a time.
var (
	placeParam = map[string]bool{"location": true, "city": true, "country": true, "state": true,
		"region": true, "place": true, "destination": true, "origin": true, "address": true,
		"town": true, "county": true}
	timeParam = map[string]bool{"date": true, "season": true, "year": true, "month": true,
		"day": true, "period": true, "time": true, "week": true, "timeframe": true, "duration": true}
)

// unfillable names a required parameter of the named tool that the
// request cannot fill with a value of the right kind from its own words
// ("" when every one can): a number when it states no amount, a place when
// it names none, a time when it says no when. Without a model, a tool the
// request gives no values for does not fit it. It is the rule `airs eval
// bfcl --model none` applies (evals/predict.Unfillable), so the endpoint
// and the eval decide alike.
func unfillable(cat catalog, name, text string) string {
	for _, e := range cat {
		if e.Tool.Name != name {
			continue
		}
		var s struct {
			Required   []string `json:"required"`
			Properties map[string]struct {
				Type    any   `json:"type"`
				Default any   `json:"default"`
				Enum    []any `json:"enum"`
			} `json:"properties"`
		}
		if json.Unmarshal(e.Tool.Parameters, &s) != nil {
			return ""
		}
		for _, r := range s.Required {
			p, ok := s.Properties[r]
			if !ok || p.Default != nil || len(p.Enum) > 0 {
				continue
			}
			t, _ := p.Type.(string)
			switch {
			case t == "integer" || t == "number":
				if !understand.StatesQuantity(text) {
					return r
				}
			case t == "string" && nameHas(r, placeParam):
				if !understand.NamesPlace(text) {
					return r
				}
			case t == "string" && nameHas(r, timeParam):
				if !understand.StatesTime(text) {
					return r
				}
			}
		}
		return ""
	}
	return ""
}

func nameHas(param string, words map[string]bool) bool {
	for _, w := range embeddings.Tokens(param) {
		if words[strings.ToLower(w)] {
			return true
		}
	}
	return false
}
