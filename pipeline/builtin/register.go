package builtin

import (
	"fmt"
	"path/filepath"

	"github.com/airs-dev/airs/pipeline"
)

// ProviderID is the provider (agent id) the builtin tools are registered
// under.
const ProviderID = "builtin"

// Options configures the builtin tools.
type Options struct {
	// Spaces maps a space name to its directory. Relative directories are
	// made absolute at registration.
	Spaces map[string]string
	// Policy says what each agent holds: the space tools need
	// ReadSpace(<space>) for the space named in each call, and ask
	// Policy.Holds(call.Caller, ReadSpace(space)). Give it the same policy
	// as the Manager (pipeline.Config.Policy). Nil: nobody may read any
	// space (unlike the Manager, where nil means AllowAll: a tool package
	// used by another host should fail closed).
	Policy pipeline.AccessPolicy
	// Remote are the spaces that are not folders (remote.go): an outside
	// MCP server's resources, by space name. A name both here and in
	// Spaces is an error.
	Remote map[string]RemoteSpace
	// Summarizer writes model summaries; nil: extractive only.
	Summarizer Summarizer
	// HTTPFetch, when set, adds the http-fetch tool (httpfetch.go), bound
	// by Policy's Network(host). Nil: no network tool.
	HTTPFetch *HTTPFetchOptions
}

// Entry is one builtin tool: its description and its handler.
type Entry struct {
	Tool    pipeline.Tool
	Handler pipeline.Handler
}

// Tools returns the builtin tools configured by opts, in a fixed order.
func Tools(opts Options) ([]Entry, error) {
	s := &spaces{dirs: map[string]string{}, policy: opts.Policy}
	for name, dir := range opts.Spaces {
		if name == "" || name == "*" {
			return nil, fmt.Errorf("builtin: invalid space name %q", name)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("builtin: space %q: %w", name, err)
		}
		s.dirs[name] = abs
	}
	s.remote = map[string]RemoteSpace{}
	for name, r := range opts.Remote {
		if _, clash := s.dirs[name]; clash {
			return nil, fmt.Errorf("builtin: space %q is both a folder (spaces) and an MCP server's resources: rename the folder's space", name)
		}
		if name == "" || name == "*" || r.Remote == nil {
			return nil, fmt.Errorf("builtin: invalid remote space %q", name)
		}
		s.remote[name] = r
	}
	names := s.names()
	entries := []Entry{
		{CalculatorTool(), Calculator()},
		{CompareTool(), Compare()},
		{deleteFileTool(names), pipeline.HandlerFunc(s.deleteFile)},
		{listFilesTool(names), pipeline.HandlerFunc(s.listFiles)},
		{pdfExtractTool(names), sized(s.pdfExtract, s.pdfFileSize)},
		{readFileTool(names), sized(s.readFile, s.readFileSize)},
		{SummarizeTool(), Summarize(opts.Summarizer)},
	}
	if opts.HTTPFetch != nil {
		entries = append(entries, Entry{HTTPFetchTool(), HTTPFetch(*opts.HTTPFetch, opts.Policy)})
	}
	return entries, nil
}

// Registrar is what Register needs from the Tool Manager;
// *pipeline.Registry has it.
type Registrar interface {
	Register(providerID string, t pipeline.Tool, h pipeline.Handler) error
}

// Register registers every builtin tool under ProviderID.
func Register(r Registrar, opts Options) error {
	entries, err := Tools(opts)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := r.Register(ProviderID, e.Tool, e.Handler); err != nil {
			return err
		}
	}
	return nil
}

// Handlers returns the builtin handlers by manifest handler id
// ("builtin.calculator", "builtin.read-file", ...), so a manifest can
// declare a builtin under another provider, name or schema.
func Handlers(opts Options) (pipeline.HandlerMap, error) {
	entries, err := Tools(opts)
	if err != nil {
		return nil, err
	}
	m := pipeline.HandlerMap{}
	for _, e := range entries {
		m[ProviderID+"."+e.Tool.Name] = e.Handler
	}
	return m, nil
}
