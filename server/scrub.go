package server

// Error texts go to clients that need not know the server's file system:
// a space's directory, AIRS's state directory or the user's home in a
// message says where the server keeps things, and whose machine it is.
// Every error answer (and chat's error events) has them replaced by the
// names the client knows them by: "<documents>/a.pdf", "<AIRS_HOME>".

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// HostPaths is what a Backend offers to keep its host's paths out of
// error texts: each absolute directory and the name an error shows
// instead.
type HostPaths interface {
	HostPaths() map[string]string
}

// newScrubber replaces each directory (and the path its symbolic links
// resolve to) with its name, the longest first so a space inside the home
// directory keeps its own name. nil when there is nothing to replace.
func newScrubber(paths map[string]string) *strings.Replacer {
	type pn struct{ path, name string }
	var all []pn
	for p, n := range paths {
		if !filepath.IsAbs(p) || len(p) < 2 {
			continue // "/" would scrub every slash
		}
		p = filepath.Clean(p)
		all = append(all, pn{p, n})
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p && len(r) > 1 {
			all = append(all, pn{r, n})
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b pn) int { return len(b.path) - len(a.path) })
	args := make([]string, 0, 2*len(all))
	for _, x := range all {
		args = append(args, x.path, x.name)
	}
	return strings.NewReplacer(args...)
}

// scrubBody is body with the host's paths replaced in every string in it.
func scrubBody(r *strings.Replacer, body map[string]any) map[string]any {
	if r == nil {
		return body
	}
	b, err := json.Marshal(body)
	if err != nil {
		return body
	}
	var out map[string]any
	if json.Unmarshal([]byte(scrubJSON(r, string(b))), &out) != nil {
		return body
	}
	return out
}

// scrubJSON replaces the host's paths in JSON text. A path is replaced
// where it appears as JSON writes it (encoding/json leaves '/' alone); the
// names have no character JSON escapes inside a string but '<' and '>',
// which a JSON string may hold as they are.
func scrubJSON(r *strings.Replacer, s string) string {
	if r == nil {
		return s
	}
	return r.Replace(s)
}
