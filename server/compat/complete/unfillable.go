package complete

import "github.com/airs-dev/airs/understand"

// unfillable names a required parameter of the named tool that the
// request cannot fill with a value of the right type from its own words
// ("" when every one can): understand.Unfilled, the rule `airs eval bfcl
// --model none` applies too (evals/predict.Unfillable), so the endpoint
// and the eval decide alike.
func unfillable(cat catalog, name, text string) string {
	for _, e := range cat {
		if e.Tool.Name == name {
			return understand.Unfilled(text, e.Tool.Parameters)
		}
	}
	return ""
}
