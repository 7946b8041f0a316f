// Package jsonptr holds the JSON Pointer (RFC 6901) helpers that the schema
// code in grammar, grammar/export, chains and selector share: escaping one
// reference token, splitting a pointer into tokens, and walking a document
// of any representation along a pointer.
package jsonptr

import (
	"strconv"
	"strings"
)

// Escape escapes one reference token: "~" as "~0", "/" as "~1".
func Escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// Unescape undoes Escape. "~1" is replaced first, so "~01" stays "~1"
// as RFC 6901 requires.
func Unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// Tokens splits ptr into its unescaped reference tokens. The empty
// pointer is the whole document (no tokens); anything else must start
// with "/" (ok is false otherwise).
func Tokens(ptr string) (toks []string, ok bool) {
	if ptr == "" {
		return nil, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	toks = strings.Split(ptr[1:], "/")
	for i, t := range toks {
		toks[i] = Unescape(t)
	}
	return toks, true
}

// Index reads tok as an index into an array of n items: a decimal number
// in [0, n).
func Index(tok string, n int) (int, bool) {
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

// Resolve walks doc along ptr. child returns a node's member (objects) or
// item (arrays, by Index) for one unescaped token, and false where there is
// none; each caller's document representation differs, the walk does not.
func Resolve[T any](doc T, ptr string, child func(node T, tok string) (T, bool)) (T, bool) {
	toks, ok := Tokens(ptr)
	if !ok {
		var zero T
		return zero, false
	}
	cur := doc
	for _, tok := range toks {
		next, ok := child(cur, tok)
		if !ok {
			var zero T
			return zero, false
		}
		cur = next
	}
	return cur, true
}
