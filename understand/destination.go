package understand

import (
	"regexp"
	"slices"
)

// takeDestinations moves the files the request names as where something
// goes, not what it works on ("a new file called todo.txt", "create
// notes.md", "save the summary as summary.md", "write it to out.txt"),
// from Objects to Destination: such a file is not read, and need not
// exist before the request runs. It reports whether it moved any.
func (in *Interpretation) takeDestinations() bool {
	keep := in.Objects[:0]
	for _, o := range in.Objects {
		if o.Named && destinationOf(o.Phrase).MatchString(in.Text) {
			if !slices.Contains(in.Destination, o.Phrase) {
				in.Destination = append(in.Destination, o.Phrase)
			}
			continue
		}
		keep = append(keep, o)
	}
	in.Objects = keep
	return len(in.Destination) > 0
}

func destinationOf(name string) Pattern {
	q := regexp.QuoteMeta(name)
	called := `(?:(?:called|named|titled)\s+)?["'“]?`
	return cachedPattern(`(?i)(?:` +
		`\b(?:new|empty|blank)\s+(?:\w+\s+)?(?:file|document|note|page)\s+` + called + q +
		`|\b(?:create|make|start|add|touch)\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?:\w+\s+)?(?:file\s+|document\s+|note\s+)?` + called + q +
		`|\b(?:save|write|put|store|export|output|dump|append)\b(?:[^.?!]|\.\w){0,80}?\b(?:to|as|into)\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?:file\s+)?` + called + q +
		`)(?:\b|$|["'”])`)
}
