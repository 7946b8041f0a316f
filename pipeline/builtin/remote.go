package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// Remote is a space whose files are not a folder of this machine: an
// outside MCP server's resources (internal/engine binds them as space
// mcp-NAME). list-files and read-file take it like a folder; its paths
// are the remote's own (a resource's URI, or its name), so they are not
// checked as relative paths, and it has no subfolders. It is read-only:
// delete-file and pdf-extract refuse it.
type Remote interface {
	List(ctx context.Context) ([]RemoteEntry, error)
	// Read returns the file at p (a URI or a name List gave), the
	// remote's own errors as pipeline errors.
	Read(ctx context.Context, p string) (RemoteFile, error)
}

// RemoteEntry is one file of a Remote.
type RemoteEntry struct {
	Path    string // what Read takes (a resource URI)
	Name    string
	Size    int64     // 0 when the remote does not say
	ModTime time.Time // zero when the remote does not say
}

// RemoteFile is one file's contents.
type RemoteFile struct {
	Path string
	Data []byte
}

// RemoteSpace is a Remote and what a caller must hold beside
// ReadSpace(NAME): an MCP server's space also needs what its tools need
// (MCP(NAME) and the server's requires), so the space is no way around
// the server's grant.
type RemoteSpace struct {
	Remote   Remote
	Requires []pipeline.Capability
}

// remoteFor is the remote space of that name with the caller's access
// checked, or ok false for a folder space.
func (s *spaces) remoteFor(space string, call *pipeline.Call) (_ Remote, ok bool, _ error) {
	r, ok := s.remote[space]
	if !ok {
		return nil, false, nil
	}
	caller := ""
	if call != nil {
		caller = call.Caller
	}
	var missing []pipeline.Capability
	for _, need := range append([]pipeline.Capability{{Kind: KindReadSpace, Arg: space}}, r.Requires...) {
		if s.policy == nil || !s.policy.Holds(caller, need) {
			missing = append(missing, need)
		}
	}
	if len(missing) > 0 {
		return nil, true, &pipeline.ToolCapabilityDenied{Required: missing}
	}
	return r.Remote, true, nil
}

func (s *spaces) listRemote(ctx context.Context, r Remote, p listParams) (json.RawMessage, error) {
	if dir, _ := strings.CutPrefix(p.Dir, "./"); dir != "" && dir != "." {
		return nil, reject(CodeNotADirectory, "space %q is an MCP server's resources and has no folders: leave dir out", p.Space)
	}
	list, err := r.List(ctx)
	if err != nil {
		return nil, err
	}
	g, err := compileGlob(p.Pattern)
	if err != nil {
		return nil, reject(CodeBadParams, "pattern %q is not a valid glob: %v", p.Pattern, err)
	}
	out := listResult{Space: p.Space, Dir: ".", Files: []FileEntry{}}
	matchPath := strings.Contains(p.Pattern, "/")
	for _, e := range list {
		subject := e.Name
		if matchPath {
			subject = e.Path
		}
		// "*" (the default) is every resource, a name with a / too.
		if !g.Match(subject) && p.Pattern != "*" {
			continue
		}
		if len(out.Files) == p.Limit {
			out.Truncated = true
			break
		}
		out.Files = append(out.Files, FileEntry{Path: e.Path, Name: e.Name, Type: "file", Size: max(e.Size, 0), ModTime: e.ModTime.UTC()})
	}
	out.Count = len(out.Files)
	return result(out)
}

func (s *spaces) readRemote(ctx context.Context, r Remote, p readParams) (json.RawMessage, error) {
	if p.Path == "" || strings.ContainsRune(p.Path, 0) {
		return nil, reject(CodeBadParams, "path must be a resource's uri or name")
	}
	f, err := r.Read(ctx, p.Path)
	if err != nil {
		return nil, err
	}
	data, size := f.Data, int64(len(f.Data))
	truncated := size > p.MaxBytes
	if truncated {
		data = trimPartialRune(data[:p.MaxBytes])
	}
	text, err := asText(ctx, data)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, reject(CodeNotText, "%q in space %q %v", f.Path, p.Space, err)
	}
	return readResultJSON(ctx, readResult{Space: p.Space, Path: f.Path, Size: size, Text: text, Truncated: truncated})
}
