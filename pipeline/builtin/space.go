package builtin

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/airs-dev/airs/pipeline"
)

// KindReadSpace is the capability kind that guards a space:
// ReadSpace(documents) lets its holder read the space "documents".
const KindReadSpace = "ReadSpace"

// readSpaceOfCall is the space tools' requirement: ReadSpace of the space
// the call names, bound per call by the Manager's stage 3 (and checked again
// by the handler, for hosts that bind the handler under another name).
var readSpaceOfCall = []pipeline.Capability{{Kind: KindReadSpace, Arg: "$space"}}

// KindWriteSpace is the capability to change a space's files:
// WriteSpace(documents) lets its holder delete files in "documents". It is
// separate from ReadSpace, and nobody holds it by default.
const KindWriteSpace = "WriteSpace"

// writeSpaceOfCall is delete-file's requirement: WriteSpace of the space
// the call names.
var writeSpaceOfCall = []pipeline.Capability{{Kind: KindWriteSpace, Arg: "$space"}}

// RequiredFor returns the capabilities a call of a builtin tool needs given
// its parameters, beyond what the Tool declares statically. For the space
// tools (list-files, read-file, pdf-extract) that is ReadSpace(<space>); for
// the others it is nil. A pipeline stage that supports parameter-dependent
// capabilities can call it before dispatch; the handlers enforce the same
// rule themselves either way.
func RequiredFor(tool string, params []byte) []pipeline.Capability {
	kind := KindReadSpace
	switch tool {
	case "list-files", "read-file", "pdf-extract":
	case "delete-file":
		kind = KindWriteSpace
	case "http-fetch":
		return NetworkFor(params)
	default:
		return nil
	}
	var p struct {
		Space string `json:"space"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Space == "" {
		return nil
	}
	return []pipeline.Capability{{Kind: kind, Arg: p.Space}}
}

// spaces resolves space names to directories and checks access.
type spaces struct {
	dirs   map[string]string
	remote map[string]RemoteSpace // remote.go: spaces that are not folders
	policy pipeline.AccessPolicy  // nil: nobody may read any space
}

func (s *spaces) names() []string {
	out := make([]string, 0, len(s.dirs)+len(s.remote))
	for n := range s.dirs {
		out = append(out, n)
	}
	for n := range s.remote {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// open checks that the caller may read the space and opens it as an
// os.Root. The caller closes the root.
func (s *spaces) open(space string, call *pipeline.Call) (*os.Root, error) {
	return s.openAs(space, call, KindReadSpace)
}

// openAs is open with the capability kind the caller must hold for the
// space (KindReadSpace, KindWriteSpace).
func (s *spaces) openAs(space string, call *pipeline.Call, kind string) (*os.Root, error) {
	dir, ok := s.dirs[space]
	if _, remote := s.remote[space]; remote {
		return nil, reject(CodeBadParams, "space %q is an MCP server's resources: only list-files and read-file take it", space)
	}
	if !ok {
		return nil, reject(CodeUnknownSpace, "no space named %q; configured spaces: %s", space, strings.Join(s.names(), ", "))
	}
	need := pipeline.Capability{Kind: kind, Arg: space}
	caller := ""
	if call != nil {
		caller = call.Caller
	}
	if s.policy == nil || !s.policy.Holds(caller, need) {
		return nil, &pipeline.ToolCapabilityDenied{Required: []pipeline.Capability{need}}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, reject(CodeIO, "space %q (%s) cannot be opened: %v", space, dir, errors.Unwrap(err))
	}
	return root, nil
}

// cleanRel validates a caller-supplied path inside a space and returns it in
// slash form, cleaned. Absolute paths, volume names, backslashes and any ".."
// element are refused outright: a path that only happens to stay inside the
// space after cleaning ("a/../b") is refused too, since no legitimate caller
// needs it and it is a common probe.
func cleanRel(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	if strings.ContainsRune(p, 0) {
		return "", reject(CodePathEscape, "path contains a NUL byte")
	}
	if strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "" {
		return "", reject(CodePathEscape, "path %q is absolute; give a path relative to the space", p)
	}
	if strings.ContainsRune(p, '\\') {
		return "", reject(CodePathEscape, "path %q contains a backslash; use / as separator", p)
	}
	if slices.Contains(strings.Split(p, "/"), "..") {
		return "", reject(CodePathEscape, "path %q contains \"..\"; paths cannot leave the space", p)
	}
	return path.Clean(p), nil
}

// fsError turns an error from os.Root into a rejection with a useful code.
// Escapes (via symlinks) are reported as such.
func fsError(space, p string, err error) error {
	switch {
	case err == nil:
		return nil
	case isEscape(err):
		return reject(CodePathEscape, "%q in space %q resolves outside the space", p, space)
	case errors.Is(err, fs.ErrNotExist):
		return reject(CodeNotFound, "%q not found in space %q", p, space)
	case errors.Is(err, fs.ErrPermission):
		return reject(CodeIO, "%q in space %q: permission denied", p, space)
	default:
		return reject(CodeIO, "%q in space %q: %v", p, space, err)
	}
}

func isEscape(err error) bool {
	// os.Root reports escapes as a *PathError wrapping an unexported
	// "path escapes from parent" error; there is no exported sentinel.
	return err != nil && strings.Contains(err.Error(), "escapes from parent")
}
