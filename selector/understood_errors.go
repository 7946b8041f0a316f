package selector

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/understand"
)

// The answers no-LLM planning gives instead of a plan: a space the request
// names that is none, several files it names equally well.

// Choice is one of several files a request names equally well.
type Choice struct {
	Space string `json:"space"`
	Path  string `json:"path"`
}

// MissingSpaceError: the request names a usual folder that is no space.
type MissingSpaceError struct {
	Name   string   // as the request names it ("documents")
	Usual  string   // its usual place ("~/Documents")
	Spaces []string // the spaces there are
}

func (e *MissingSpaceError) Error() string {
	have := "no space is configured"
	if len(e.Spaces) > 0 {
		have = "the spaces are " + strings.Join(e.Spaces, ", ")
	}
	return fmt.Sprintf("there is no space %q (%s): create %s, or map the space to a folder in airs.yaml (spaces:\n  %s: DIR) and grant ReadSpace(%s); nothing ran",
		e.Name, have, e.Usual, e.Name, e.Name)
}

// AmbiguousError: a request names several files equally well; nothing is
// guessed. Choices lists them.
type AmbiguousError struct {
	Phrase  string
	Choices []Choice
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	spaces := len(e.Choices) > 0
	for _, c := range e.Choices {
		spaces = spaces && c.Path == ""
	}
	if spaces {
		// No file to tell apart: the request names no space of several.
		fmt.Fprintf(&b, "the request names no space, and you may use %d; say which one:", len(e.Choices))
		for i, c := range e.Choices {
			fmt.Fprintf(&b, "\n  %d. space %s", i+1, c.Space)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%q names %d files equally well; say which one:", e.Phrase, len(e.Choices))
	for i, c := range e.Choices {
		fmt.Fprintf(&b, "\n  %d. %s (space %s)", i+1, c.Path, c.Space)
	}
	return b.String()
}

// Ambiguity is the phrase that matched several files and the files, for a
// transport that answers with them (server.Ambiguous).
func (e *AmbiguousError) Ambiguity() (string, any) { return e.Phrase, e.Choices }

// errUseReader: the tool tried reads the file, but another reads its type
// better (pdf-extract a PDF): that one serves the request.
type errUseReader struct{ r *toolShape }

func (e errUseReader) Error() string { return e.r.t.Name + " reads this type of file better" }

// errAmbiguous carries the choices up from filling.
type errAmbiguous struct{ err *AmbiguousError }

func (e errAmbiguous) Error() string { return e.err.Error() }

func choicesOf(o understand.Object) *AmbiguousError {
	a := &AmbiguousError{Phrase: o.Phrase}
	for _, m := range o.Matches {
		a.Choices = append(a.Choices, Choice{Space: m.Space, Path: m.Path})
	}
	return a
}

// readStep adds the step that reads file e (as text) and returns a
// reference to its text.
func asAmb(err error, out *errAmbiguous) bool {
	if a, ok := err.(errAmbiguous); ok {
		*out = a
		return true
	}
	return false
}

// CapabilityNeededError: the tool that serves a request is one the caller
// may not call; it names the tool, the call it would make and the
// capabilities to grant. Nothing ran.
type CapabilityNeededError struct {
	Caller    string
	Tool      string
	Arguments json.RawMessage // the first call's
	More      int             // further calls of it the request asks for (several files)
	Missing   []pipeline.Capability
	// Held is what the caller holds now, when known: the grant's whole
	// line is shown then.
	Held []pipeline.Capability
}

func (e *CapabilityNeededError) Error() string {
	caps := make([]string, len(e.Missing))
	quoted := make([]string, len(e.Missing))
	for i, c := range e.Missing {
		caps[i] = c.String()
		quoted[i] = strconv.Quote(c.String())
	}
	more := ""
	if e.More > 0 {
		more = fmt.Sprintf(" and %d more", e.More)
	}
	head := fmt.Sprintf("%s fits this request (%s %s%s), but agent %q lacks %s; nothing ran. ",
		e.Tool, e.Tool, e.Arguments, more, e.Caller, strings.Join(caps, ", "))
	if len(e.Held) == 0 {
		return head + fmt.Sprintf("Add %s to agents.%s.capabilities in airs.yaml ('airs help config' shows the section; an agents section replaces the default agent, so keep what it holds), then ask again",
			strings.Join(quoted, ", "), e.Caller)
	}
	all := make([]string, 0, len(e.Held)+len(e.Missing))
	for _, c := range e.Held {
		all = append(all, strconv.Quote(c.String()))
	}
	all = append(all, quoted...)
	return head + fmt.Sprintf("Grant it in airs.yaml ('airs help config' shows where it is), then ask again:\n  agents:\n    %s:\n      capabilities: [%s]",
		e.Caller, strings.Join(all, ", "))
}

// Is makes it a capability denial to errors.Is (its exit code and status).
func (e *CapabilityNeededError) Is(target error) bool {
	return target == pipeline.ErrToolCapabilityDenied
}

// Kind is the pipeline's error kind for it.
func (e *CapabilityNeededError) Kind() string { return pipeline.KindToolCapabilityDenied }
