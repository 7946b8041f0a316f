package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resources are the files of the spaces the caller may read, named
// airs://SPACE/PATH. AIRS does not read them itself: resources/list is a
// call of list-files and resources/read one of read-file (pdf-extract for
// a .pdf), through the Backend as the caller, so the same capability
// checks, limits and audit records apply as to a tools/call of them. The
// spaces are the values of list-files' "space" enum as the caller sees it
// (the backend narrows it to the spaces the caller may read); without
// list-files the caller has no resources.

const (
	resourceScheme = "airs"
	// maxListed bounds the entries listed per space (list-files' own
	// maximum): a client pages through at most this many.
	maxListed = 10_000
)

// addResources registers the template clients discover with
// resources/templates/list, and answers resources/list and resources/read
// in a middleware: the SDK's own list holds static resources only, and a
// space's files change under it.
func (s *Server) addResources() {
	s.Server.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "space-file",
		Title:       "A file of a space",
		URITemplate: resourceScheme + "://{space}/{+path}",
		Description: "A file in a space (a folder the user shared) that you may read; text files as text, PDFs as their extracted text.",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return s.readResource(ctx, req.Params.URI)
	})
	s.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "resources/list":
				p, _ := req.GetParams().(*mcp.ListResourcesParams)
				cursor := ""
				if p != nil {
					cursor = p.Cursor
				}
				return s.listResources(ctx, cursor)
			case "resources/read":
				if p, ok := req.GetParams().(*mcp.ReadResourceParams); ok && p != nil {
					return s.readResource(ctx, p.URI)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// readableSpaces are the spaces the caller may list, from list-files'
// schema as the backend gives it to the caller.
func (s *Server) readableSpaces() []string {
	for _, t := range s.b.Tools(s.caller) {
		if t.Name != "list-files" {
			continue
		}
		var schema struct {
			Properties struct {
				Space struct {
					Enum []string `json:"enum"`
				} `json:"space"`
			} `json:"properties"`
		}
		if json.Unmarshal(t.Parameters, &schema) != nil {
			return nil
		}
		// mcp-NAME (a name no folder space may take) is an outside MCP
		// server's resources: not served again as airs:// resources, whose
		// paths are a folder's.
		out := slices.DeleteFunc(slices.Clone(schema.Properties.Space.Enum), func(n string) bool { return strings.HasPrefix(n, "mcp-") })
		slices.Sort(out)
		return out
	}
	return nil
}

// cursor is where the next page of resources/list starts: the space and
// the offset among its listed entries. It is opaque to clients.
type cursor struct {
	Space  string `json:"s"`
	Offset int    `json:"o"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Offset < 0 || c.Offset >= maxListed {
		return c, invalidParams("invalid cursor: pass the nextCursor of the previous resources/list page unchanged")
	}
	return c, nil
}

// listEntry is one entry of list-files' result.
type listEntry struct {
	Path string `json:"path"`
	Name string `json:"name"`
	Type string `json:"type"`
	Size int64  `json:"size"`
}

// listResources answers one page: up to PageSize files, in the spaces'
// name order and each space's walk order. A page costs one list-files
// call that walks the space up to the page's end (list-files has no
// offset), so paging is bounded by maxListed entries per space.
func (s *Server) listResources(ctx context.Context, cur string) (*mcp.ListResourcesResult, error) {
	spaces := s.readableSpaces()
	c := cursor{}
	if cur != "" {
		var err error
		if c, err = decodeCursor(cur); err != nil {
			return nil, err
		}
		if !slices.Contains(spaces, c.Space) {
			return nil, invalidParams(fmt.Sprintf("invalid cursor: space %q is not one you may read", c.Space))
		}
	} else if len(spaces) > 0 {
		c.Space = spaces[0]
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	res.CacheScope = "private" // the caller's spaces
	for c.Space != "" && len(res.Resources) < s.opts.PageSize {
		want := min(c.Offset+s.opts.PageSize-len(res.Resources)+1, maxListed)
		args, _ := json.Marshal(map[string]any{"space": c.Space, "recursive": true, "limit": want})
		r, err := s.b.Call(ctx, pipeline.Request{Tool: "list-files", Params: args, Encoding: pipeline.JSON, Caller: s.caller})
		if err != nil {
			return nil, internalError("listing space " + c.Space + ": " + errorText(err))
		}
		var out struct {
			Files     []listEntry `json:"files"`
			Truncated bool        `json:"truncated"`
		}
		if err := json.Unmarshal(r.Output, &out); err != nil {
			return nil, fmt.Errorf("list-files answered what is not its result: %w", err)
		}
		i := c.Offset
		for ; i < len(out.Files) && len(res.Resources) < s.opts.PageSize; i++ {
			if f := out.Files[i]; f.Type == "file" {
				res.Resources = append(res.Resources, resourceOf(c.Space, f))
			}
		}
		switch {
		case i < len(out.Files):
			c.Offset = i // the page is full and this space has more: the next page starts here
			res.NextCursor = c.encode()
			return res, nil
		case len(out.Files) == want && want < maxListed:
			c.Offset = i // folders took the room: walk this space further
			continue
		}
		// This space is done (or at its bound): go on with the next one.
		k := slices.Index(spaces, c.Space)
		c = cursor{}
		if k+1 < len(spaces) {
			c.Space = spaces[k+1]
		}
	}
	if c.Space != "" {
		res.NextCursor = c.encode()
	}
	return res, nil
}

func resourceOf(space string, f listEntry) *mcp.Resource {
	return &mcp.Resource{
		URI:      resourceURI(space, f.Path),
		Name:     f.Path,
		Title:    f.Name + " (" + space + ")",
		MIMEType: mimeOf(f.Path),
		Size:     f.Size,
	}
}

// resourceURI is airs://SPACE/PATH, the path's segments escaped.
func resourceURI(space, p string) string {
	return (&url.URL{Scheme: resourceScheme, Host: space, Path: "/" + p}).String()
}

// parseResourceURI is resourceURI's inverse; it refuses anything else.
func parseResourceURI(uri string) (space, p string, err error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != resourceScheme || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", invalidParams(fmt.Sprintf("%q is not an AIRS resource: resources are airs://SPACE/PATH, as resources/list names them", uri))
	}
	p = strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return "", "", invalidParams(fmt.Sprintf("%q names a space, not a file: add the file's path", uri))
	}
	return u.Host, p, nil
}

func mimeOf(p string) string {
	ext := strings.ToLower(path.Ext(p))
	switch ext {
	case ".md", ".markdown":
		return "text/markdown"
	case ".pdf":
		return "application/pdf"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "text/plain"
}

// readResource reads one file as the caller, through read-file (or
// pdf-extract for a PDF, whose text is what a client can use). The tool's
// checks decide: a space the caller may not read, a path that escapes it, a
// binary file, all come back as the tool's error.
func (s *Server) readResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	space, p, err := parseResourceURI(uri)
	if err != nil {
		return nil, err
	}
	tool, mt := "read-file", mimeOf(p)
	if mt == "application/pdf" {
		tool = "pdf-extract"
	}
	args, _ := json.Marshal(map[string]string{"space": space, "path": p})
	r, err := s.b.Call(ctx, pipeline.Request{Tool: tool, Params: args, Encoding: pipeline.JSON, Caller: s.caller})
	if err != nil {
		if k := pipeline.KindOf(err); k == "tool_not_found" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, internalError("reading " + uri + ": " + errorText(err))
	}
	var out struct {
		Text      string `json:"text"`
		Truncated bool   `json:"truncated"`
	}
	if err := json.Unmarshal(r.Output, &out); err != nil {
		return nil, fmt.Errorf("%s answered what is not its result: %w", tool, err)
	}
	text := out.Text
	if out.Truncated {
		text += fmt.Sprintf("\n[truncated by %s: call it with a larger limit for the rest]", tool)
	}
	if tool == "pdf-extract" {
		mt = "text/plain" // the extracted text, not the PDF's bytes
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mt, Text: text}}}, nil
}

// invalidParams is the JSON-RPC error for a request the client can fix.
func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// internalError is the JSON-RPC error for a request AIRS could not serve;
// msg says why and, from the pipeline's error, what to do.
func internalError(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}
