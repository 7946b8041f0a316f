package understand

import (
	"regexp"
	"strings"
)

// formatWords name data and file formats, the way a request asks for its
// answer ("give it as JSON", "a CSV of the totals"): written in capitals
// like a place's name, yet never one.
var formatWords = map[string]bool{
	"json": true, "csv": true, "tsv": true, "xml": true, "yaml": true, "yml": true, "html": true,
	"markdown": true, "pdf": true, "txt": true, "xlsx": true, "xls": true, "docx": true, "rtf": true,
	"png": true, "jpeg": true, "jpg": true, "svg": true, "gif": true, "ascii": true,
}

// FormatWord reports whether w names a data or file format (JSON, CSV,
// PDF…), in any case.
func FormatWord(w string) bool { return formatWords[strings.ToLower(w)] }

// PlaceParam reports whether a parameter's name says it takes a place
// (city, location, destination…).
func PlaceParam(name string) bool { return nameHas(name, placeParam) }

const formatAlt = `json|csv|tsv|xml|ya?ml|html|markdown|pdf|txt|xlsx?|docx|rtf|png|jpe?g|svg|gif|ascii`

var (
	// reAsFormat: how the answer is to be given ("as JSON", "in CSV
	// format", "as a PDF").
	reAsFormat = regexp.MustCompile(`(?i)\b(?:as|in)\s+(?:an?\s+)?(?:` + formatAlt + `)\b(?:\s+format\b)?`)
	// reOnlyFormat: a part that asks for nothing but that ("give it as
	// JSON with city", "return the results in CSV format").
	reOnlyFormat = regexp.MustCompile(`(?i)^(?:please\s+)?(?:(?:give|return|show|send|format|output|print|put|write|answer|reply)\s+(?:me\s+)?(?:it|them|that|this|those|the\s+(?:result|results|answer|output|data))\s+)?(?:back\s+)?(?:as|in)\s+(?:an?\s+)?(?:` +
		formatAlt + `)\b(?:\s+format\b)?(?:\s*,?\s*(?:with|including|containing)\b[^.;!?]*)?[\s.!?]*(?:please)?[\s.!?]*$`)
)

// WithoutFormat is text without the phrases that say in which format the
// answer is to be given ("as JSON"): they say how to present a result,
// not what the request asks a tool to do.
func WithoutFormat(text string) string {
	return reAsFormat.ReplaceAllString(text, " ")
}

// OnlyFormat reports whether a part of a request asks for nothing but the
// format of the answer ("give it as JSON with city"): it belongs to the
// part before it and is no task of its own.
func OnlyFormat(part string) bool {
	return reOnlyFormat.MatchString(strings.TrimSpace(part))
}
