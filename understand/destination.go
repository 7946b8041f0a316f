package understand

import (
	"slices"
	"strings"
)

// takeDestinations moves the files the request names as where something
// goes, not what it works on ("a new file called todo.txt", "create
// notes.md", "save the summary as summary.md", "write it to out.txt"),
// from Objects to Destination: such a file is not read, and need not
// exist before the request runs. It reports whether it moved any.
func (in *Interpretation) takeDestinations() bool {
	dests := destinationWords(in.Text)
	if len(dests) == 0 {
		return false
	}
	keep := in.Objects[:0]
	for _, o := range in.Objects {
		if o.Named && slices.ContainsFunc(dests, func(d string) bool { return strings.EqualFold(d, o.Phrase) }) {
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

// reDestination is a phrase that names where something goes; its group
// is the word after it (a file name when the request names one there).
var reDestination = MustPattern(`(?i)(?:` +
	`\b(?:new|empty|blank)\s+(?:\w+\s+)?(?:file|document|note|page)\s+` +
	`|\b(?:create|make|start|add|touch)\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?:\w+\s+)?(?:file\s+|document\s+|note\s+)?` +
	`|\b(?:save|write|put|store|export|output|dump|append)\b(?:[^.?!]|\.\w){0,80}?\b(?:to|as|into)\s+(?:(?:a|an|the)\s+)?(?:new\s+)?(?:file\s+)?` +
	`)(?:(?:called|named|titled)\s+)?["'“]?([^\s"'”]+)`)

// destinationWords are the words the request's destination phrases lead
// to, trailing punctuation cut. One fixed pattern: the request's own file
// names are compared with what it finds, never compiled into a pattern
// (a server would keep one per name it ever saw).
func destinationWords(text string) []string {
	var out []string
	for _, m := range reDestination.FindAllStringSubmatch(text, -1) {
		if w := strings.TrimRight(m[1], ".,;:!?)"); w != "" {
			out = append(out, w)
		}
	}
	return out
}
