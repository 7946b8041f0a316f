// Package provenance says where a value came from: the user's own words, a
// file in a space, an outside MCP server, a network host, or a tool that
// computed it. A value read from a document is data, never an instruction:
// its label travels with it (through chain templates, plans, the turns of a
// conversation, the arguments a model writes after reading it) so that a
// flow policy, not the model, decides what it may reach — the defence CaMeL
// (Debenedetti et al., 2025, "Defeating Prompt Injections by Design")
// builds into an interpreter, here built into the tool gateway.
//
// The package is a leaf: labels, sets of labels, and Origins, the bounded
// memory of what one caller has been shown, which finds the labels of a
// value by where it occurs.
package provenance

import (
	"slices"
	"strings"
)

// Kind is the sort of place a value came from.
type Kind string

const (
	// User: the user's own words (the request). Trusted.
	User Kind = "user"
	// Space: the text or the name of a file in a space (Source
	// "space/path"; a listing's Source is "space/" plus the folder).
	Space Kind = "space"
	// MCP: a result, resource or description from an outside MCP server
	// (Source: the server's name).
	MCP Kind = "mcp"
	// Network: an answer from a network host (Source: the host).
	Network Kind = "network"
	// Tool: computed by a tool from its inputs alone (Source: the tool),
	// e.g. the calculator's result. Trusted unless an input was not.
	Tool Kind = "tool"
)

// DescriptionsSuffix ends the Source of an MCP label that came from the
// server's tool descriptions rather than a result ("notes#descriptions").
const DescriptionsSuffix = "#descriptions"

// Label is one origin of a value.
type Label struct {
	Kind    Kind   `json:"kind"`
	Source  string `json:"source,omitempty"`
	Trusted bool   `json:"trusted"`
}

// String is the label as the audit record and `/why` write it:
// "space:documents/invoice.pdf (untrusted)".
func (l Label) String() string {
	s := string(l.Kind)
	if l.Source != "" {
		s += ":" + l.Source
	}
	if !l.Trusted {
		s += " (untrusted)"
	}
	return s
}

// Describe is the label in a sentence's words, for the person asked to
// approve a flow: "the text of documents/invoice.pdf".
func (l Label) Describe() string {
	switch l.Kind {
	case User:
		return "the user's own words"
	case Space:
		if strings.HasSuffix(l.Source, "/") {
			return "the file names listed in " + strings.TrimSuffix(l.Source, "/")
		}
		return "the text of " + l.Source
	case MCP:
		if name, ok := strings.CutSuffix(l.Source, DescriptionsSuffix); ok {
			return "the tool descriptions of MCP server " + name
		}
		return "the output of MCP server " + l.Source
	case Network:
		return "the answer of " + l.Source
	case Tool:
		return "the result of " + l.Source
	}
	return string(l.Kind) + " " + l.Source
}

// Set is a set of labels, sorted and without duplicates (the zero value is
// the empty set: a value with no known origin beyond its caller).
type Set []Label

func compare(a, b Label) int {
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	if c := strings.Compare(a.Source, b.Source); c != 0 {
		return c
	}
	switch {
	case a.Trusted == b.Trusted:
		return 0
	case a.Trusted:
		return 1
	}
	return -1
}

// Of builds a set from labels.
func Of(labels ...Label) Set {
	s := Set(slices.Clone(labels))
	slices.SortFunc(s, compare)
	return slices.CompactFunc(s, func(a, b Label) bool { return compare(a, b) == 0 })
}

// Union is s ∪ o (neither is changed).
func (s Set) Union(o Set) Set {
	switch {
	case len(o) == 0:
		return s
	case len(s) == 0:
		return o
	}
	out := make(Set, 0, len(s)+len(o))
	out = append(append(out, s...), o...)
	slices.SortFunc(out, compare)
	return slices.CompactFunc(out, func(a, b Label) bool { return compare(a, b) == 0 })
}

// Untrusted is the subset of labels that are not trusted.
func (s Set) Untrusted() Set {
	var out Set
	for _, l := range s {
		if !l.Trusted {
			out = append(out, l)
		}
	}
	return out
}

// Trusted reports whether every label is trusted (true for the empty set).
func (s Set) Trusted() bool { return len(s.Untrusted()) == 0 }

// Only is the subset of labels of the given kinds.
func (s Set) Only(kinds ...Kind) Set {
	var out Set
	for _, l := range s {
		if slices.Contains(kinds, l.Kind) {
			out = append(out, l)
		}
	}
	return out
}

// Strings are the labels' String forms.
func (s Set) Strings() []string {
	if len(s) == 0 {
		return nil
	}
	out := make([]string, len(s))
	for i, l := range s {
		out[i] = l.String()
	}
	return out
}

// Describe lists the labels in words: "the text of documents/a.pdf and
// the answer of evil.example".
func (s Set) Describe() string {
	parts := make([]string, len(s))
	for i, l := range s {
		parts[i] = l.Describe()
	}
	switch len(parts) {
	case 0:
		return "nowhere known"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// Args are the labels of a call's arguments, by argument name (a top-level
// parameter; a nested value's labels are its top-level argument's).
type Args map[string]Set

// Strings is Args in the audit record's form.
func (a Args) Strings() map[string][]string {
	if len(a) == 0 {
		return nil
	}
	out := make(map[string][]string, len(a))
	for k, s := range a {
		if len(s) > 0 {
			out[k] = s.Strings()
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
