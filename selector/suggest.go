package selector

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// One call of one tool from a request's interpretation, for a caller that
// offers a call rather than running a plan (the recommender's prefilled
// suggestions): filled by type as no-LLM planning fills a plan's step, and
// checked dry before it is shown.

// CallUnderstood fills one call of t for a request read against env (the
// spaces and their files), the way PlanUnderstood fills a step: a file the
// request names (resolved, of a type t reads) for a path, the arithmetic
// it states for an expression, the text it gives for a text, a value of a
// telling type for the rest; a value extraction reads from the words only
// when t's words cover what the request asks for. callable are the
// caller's tools (the readers a file could go to). It fails when the call
// would need a step before it (a file's text to read first), when another
// tool reads the file's type better, when the request names several files
// equally well, when an argument has no value of its type, or when the
// request asks to delete (move, overwrite) and t does not.
func CallUnderstood(t Entry, in *understand.Interpretation, env understand.Env, callable []Entry, hints Hints) (map[string]any, error) {
	sh, err := shapeOf(t.Tool)
	if err != nil {
		return nil, err
	}
	entries := make(map[string]Entry, len(callable)+1)
	for _, e := range callable {
		if _, dup := entries[e.Tool.Name]; !dup {
			entries[e.Tool.Name] = e
		}
	}
	entries[t.Tool.Name] = t
	s := &Selector{Config: Config{Hints: hints}, Env: func(string) understand.Env { return env }}
	pl := &planner{s: s, env: env, in: in, request: in.Text, entries: entries, shapes: map[string]*toolShape{}}
	covered := in.ActionWords() != "" && coverageOf(coverageTerms(in.ActionWords()), t.Tool) > 0
	if in.Main().Destructive() && !covered {
		return nil, fmt.Errorf("the request asks to %s, which %s does not", in.Main(), t.Tool.Name)
	}
	if err := pl.fill(sh, !covered); err != nil {
		return nil, err
	}
	if len(pl.steps) != 1 || pl.steps[0].Function != t.Tool.Name || pl.steps[0].Foreach != "" {
		return nil, fmt.Errorf("%s needs other steps before it for this request", t.Tool.Name)
	}
	raw := pl.steps[0].Arguments
	if strings.Contains(string(raw), "{{") {
		return nil, fmt.Errorf("%s takes what another step gives for this request", t.Tool.Name)
	}
	var args map[string]any
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, err
	}
	return args, nil
}

// SuggestionFits is the dry check of a call offered to a person, before
// it is shown: every argument a value of its parameter's type
// (ArgumentsFit: a parseable expression, a file that is there, of a type
// the tool reads, a space the caller has), no text argument that is a
// space's name or empty, and a file's reader the one of its type among
// the caller's tools (read-file is no suggestion for a PDF that
// pdf-extract reads).
func SuggestionFits(t pipeline.Tool, args map[string]any, callable []Entry, spaces []string, exists func(space, path string) bool) error {
	if err := ArgumentsFit(t, args, spaces, exists); err != nil {
		return err
	}
	sh, err := shapeOf(t)
	if err != nil {
		return err
	}
	for name, v := range args {
		s, ok := v.(string)
		if !ok {
			continue
		}
		switch sh.roles[name] {
		case roleText:
			if strings.TrimSpace(s) == "" {
				return fmt.Errorf("%s is empty", name)
			}
			for _, sp := range spaces {
				if strings.EqualFold(strings.TrimSpace(s), sp) {
					return fmt.Errorf("%s %q is a space's name, not a text", name, s)
				}
			}
		case rolePath:
			if !sh.isReader() {
				continue
			}
			ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(s), "."))
			mine := sh.fitsType(ext)
			for _, e := range callable {
				if e.Tool.Name == t.Name {
					continue
				}
				if o, err := shapeOf(e.Tool); err == nil && o.isReader() && o.fitsType(ext) > mine {
					return fmt.Errorf("%s reads .%s files better than %s", e.Tool.Name, ext, t.Name)
				}
			}
		}
	}
	return nil
}
