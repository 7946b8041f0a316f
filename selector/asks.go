package selector

import (
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// RequestAsks is what a request asks for, as level 2's verifier reads it:
// its action words and whether it explicitly asks to delete or move
// something (package understand).
func RequestAsks(text string) pipeline.Asked {
	in := understand.Parse(text, understand.Env{})
	a := pipeline.Asked{Destructive: in.ExplicitDestructive}
	for _, x := range in.Actions {
		a.Actions = append(a.Actions, string(x))
	}
	return a
}
