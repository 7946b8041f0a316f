package selector

import (
	"slices"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// ArgumentsUnderstood fills a tool's arguments from a request's
// interpretation: the values it has typed (the arithmetic it states, in
// the calculator's grammar, for an expression parameter; the text it
// gives to work on for the one text parameter) over what extraction reads
// from the words for the rest (ExtractArgumentsReport's answer and missing
// list). It is the one place a caller outside planning (no-LLM selection,
// the recommender's prefilled suggestions, replay's corrections) turns a
// request into one tool's arguments.
func ArgumentsUnderstood(t pipeline.Tool, in *understand.Interpretation, hints Hints) (map[string]any, []string, error) {
	args, missing, err := ExtractArgumentsReport(t.Parameters, in.Text, hints)
	if err != nil {
		return nil, nil, err
	}
	sh, err := shapeOf(t)
	if err != nil {
		// A schema the shapes cannot read (not an object): extraction's
		// answer stands.
		return args, missing, nil
	}
	var texts []string
	for _, p := range sh.root.Props {
		if sh.roles[p.Name] == roleText {
			texts = append(texts, p.Name)
		}
	}
	set := func(name string, v any) {
		args[name] = v
		missing = slices.DeleteFunc(missing, func(m string) bool { return m == name })
	}
	for _, p := range sh.root.Props {
		switch {
		case sh.roles[p.Name] == roleExpr && in.Expression != "":
			set(p.Name, in.Expression)
		case sh.roles[p.Name] == roleText && in.Body != "" && len(texts) == 1:
			set(p.Name, in.Body)
		}
	}
	return args, missing, nil
}
