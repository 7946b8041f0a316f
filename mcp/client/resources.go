package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/builtin"
)

// Resources: a server's resources are the space ResourceSpace(NAME) of
// the builtins list-files and read-file (internal/engine binds the space
// to Resources and ReadResource; pipeline/builtin/remote.go reads it), so
// they are read as any space is, with ReadSpace(mcp-NAME) beside
// MCP(NAME) and the server's requires. (They were two tools of AIRS's
// making per server, NS.resources_list and NS.resource_read, until the
// space existed: two ways to read the same thing only gave the selector
// more to choose from.)

// ResourceSpace is the space name a server's resources are read as:
// ReadSpace(ResourceSpace(name)) grants them.
func ResourceSpace(name string) string { return "mcp-" + name }

// maxResources bounds one listing: a server listing more is asked for
// less, as with max_tools.
const maxResources = 1000

// HasResources reports whether the connected server declares resources.
func (c *Conn) HasResources(ctx context.Context) bool {
	l, err := c.get(ctx)
	if err != nil {
		return false
	}
	r := l.sess.InitializeResult()
	return r != nil && r.Capabilities != nil && r.Capabilities.Resources != nil
}

// resourceCall runs f on the live link with the server's timeout, and
// classifies its error as invoke does.
func resourceCall[T any](ctx context.Context, c *Conn, f func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	l, err := c.get(ctx)
	if err != nil {
		return zero, err
	}
	if r := l.sess.InitializeResult(); r == nil || r.Capabilities == nil || r.Capabilities.Resources == nil {
		return zero, pipeline.Reject("no_resources", fmt.Sprintf("mcp server %s has no resources", c.srv.Name))
	}
	callCtx, cancel := c.callContext(ctx)
	defer cancel()
	v, err := f(callCtx, l.sess)
	if err != nil {
		if ferr, ok := c.callFailed(ctx, callCtx, l, err); ok {
			return zero, ferr
		}
		var re *resourceError
		if errors.As(err, &re) {
			return zero, pipeline.Reject(re.code, re.msg)
		}
		return zero, c.broken(l, err)
	}
	return v, nil
}

type resourceError struct{ code, msg string }

func (e *resourceError) Error() string { return e.msg }

// Resources lists the server's resources (at most 1,000).
func (c *Conn) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	return resourceCall(ctx, c, func(ctx context.Context, s *mcp.ClientSession) ([]*mcp.Resource, error) {
		list := []*mcp.Resource{}
		for r, err := range s.Resources(ctx, nil) {
			if err != nil {
				return nil, err
			}
			if len(list) == maxResources {
				return nil, &resourceError{"too_many_resources", fmt.Sprintf("mcp server %s lists more than %d resources: read one by its uri instead", c.srv.Name, maxResources)}
			}
			list = append(list, r)
		}
		return list, nil
	})
}

// ReadResource reads one resource, within max_response_bytes.
func (c *Conn) ReadResource(ctx context.Context, uri string) ([]*mcp.ResourceContents, error) {
	return resourceCall(ctx, c, func(ctx context.Context, s *mcp.ClientSession) ([]*mcp.ResourceContents, error) {
		r, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			return nil, err
		}
		n := 0
		for _, rc := range r.Contents {
			n += len(rc.Text) + len(rc.Blob)
		}
		if max := c.srv.maxResponse(); n > max {
			return nil, &resourceError{"response_too_large", fmt.Sprintf("resource %s is %d bytes, over max_response_bytes (%d): raise mcp.servers.%s.max_response_bytes in airs.yaml", uri, n, max, c.srv.Name)}
		}
		return r.Contents, nil
	})
}

// Space is the server's resources as a space of the builtins (the
// engine binds it to ResourceSpace(NAME)): a file's path is its URI, and
// read-file also takes a resource's name.
func (c *Conn) Space() builtin.Remote { return connSpace{c} }

type connSpace struct{ c *Conn }

func (s connSpace) List(ctx context.Context) ([]builtin.RemoteEntry, error) {
	list, err := s.c.Resources(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]builtin.RemoteEntry, 0, len(list))
	for _, r := range list {
		e := builtin.RemoteEntry{Path: r.URI, Name: cmp.Or(r.Name, r.URI), Size: r.Size}
		if r.Annotations != nil {
			e.ModTime, _ = time.Parse(time.RFC3339, r.Annotations.LastModified)
		}
		out = append(out, e)
	}
	return out, nil
}

func (s connSpace) Read(ctx context.Context, p string) (builtin.RemoteFile, error) {
	uri := p
	if !strings.Contains(p, ":") {
		// Not a URI (every URI has a scheme): a resource's name.
		list, err := s.c.Resources(ctx)
		if err != nil {
			return builtin.RemoteFile{}, err
		}
		uri = ""
		for _, r := range list {
			if r.Name == p {
				uri = r.URI
				break
			}
		}
		if uri == "" {
			return builtin.RemoteFile{}, pipeline.Reject("not_found", fmt.Sprintf("mcp server %s has no resource named %q: list-files lists them", s.c.srv.Name, p))
		}
	}
	cs, err := s.c.ReadResource(ctx, uri)
	if err != nil {
		return builtin.RemoteFile{}, err
	}
	// A resource may come in parts (a folder's files, say): their texts
	// one after another.
	var data []byte
	for i, rc := range cs {
		if i > 0 && len(data) > 0 {
			data = append(data, '\n')
		}
		data = append(data, rc.Text...)
		data = append(data, rc.Blob...)
	}
	return builtin.RemoteFile{Path: uri, Data: data}, nil
}
