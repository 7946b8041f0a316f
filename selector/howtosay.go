package selector

import "strings"

// HowToSay tells a person how to give, in the request, the values of the
// parameters it did not give: by what a parameter of that name takes, so
// that a missing file is asked for as a file name and a missing text as a
// quote, not as a schema field.
func HowToSay(missing []string) string {
	var hints []string
	seen := map[string]bool{}
	for _, name := range missing {
		h := hintFor(strings.ToLower(name))
		if !seen[h] {
			seen[h] = true
			hints = append(hints, h)
		}
	}
	if len(hints) == 0 {
		return "say them in the request"
	}
	return strings.Join(hints, "; ")
}

func hintFor(name string) string {
	switch {
	case name == "space":
		return "name the space (a shared folder, for example documents)"
	case strings.Contains(name, "path") || strings.Contains(name, "file"):
		return "name the file (for example report.pdf)"
	case name == "dir" || strings.Contains(name, "folder") || strings.Contains(name, "directory"):
		return "name the folder"
	case name == "expression":
		return "write the arithmetic (for example 12% of 350)"
	case name == "text" || name == "a" || name == "b" || name == "content" || name == "body":
		return "quote the text, or name the files it is in"
	}
	return "say the " + strings.ReplaceAll(name, "_", " ")
}
