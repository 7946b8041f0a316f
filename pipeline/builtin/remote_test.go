package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// fakeRemote is two resources, one of them binary.
type fakeRemote struct{}

func (fakeRemote) List(context.Context) ([]RemoteEntry, error) {
	return []RemoteEntry{
		{Path: "test://notes/a", Name: "notes/a.md", Size: 5, ModTime: time.Unix(1, 0)},
		{Path: "test://bin", Name: "blob"},
	}, nil
}

func (fakeRemote) Read(_ context.Context, p string) (RemoteFile, error) {
	switch p {
	case "test://notes/a", "notes/a.md":
		return RemoteFile{Path: "test://notes/a", Data: []byte("héllo")}, nil
	case "test://bin":
		return RemoteFile{Path: p, Data: []byte{0, 1, 2, 0xff}}, nil
	}
	return RemoteFile{}, pipeline.Reject("not_found", "no resource "+p)
}

func remoteTools(t *testing.T) map[string]Entry {
	t.Helper()
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}, Capabilities: map[string][]pipeline.Capability{
		"granted": {{Kind: KindReadSpace, Arg: "mcp-x"}, {Kind: "MCP", Arg: "x"}},
		"space":   {{Kind: KindReadSpace, Arg: "*"}}, // no MCP(x)
	}}
	entries, err := Tools(Options{Spaces: map[string]string{"documents": t.TempDir()}, Policy: policy,
		Remote: map[string]RemoteSpace{"mcp-x": {Remote: fakeRemote{}, Requires: []pipeline.Capability{{Kind: "MCP", Arg: "x"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Entry{}
	for _, e := range entries {
		m[e.Tool.Name] = e
	}
	return m
}

func TestRemoteSpace(t *testing.T) {
	tools := remoteTools(t)
	// The space is in the schema's enum beside the folders.
	var sch struct {
		Properties struct{ Space struct{ Enum []string } }
	}
	json.Unmarshal(tools["read-file"].Tool.Parameters, &sch)
	if !slices.Equal(sch.Properties.Space.Enum, []string{"documents", "mcp-x"}) {
		t.Fatalf("enum = %v", sch.Properties.Space.Enum)
	}

	out, err := invoke(t, tools["list-files"], "granted", map[string]any{"space": "mcp-x"})
	if err != nil {
		t.Fatal(err)
	}
	var l listResult
	json.Unmarshal(out, &l)
	if l.Count != 2 || l.Files[0].Path != "test://notes/a" || l.Files[0].Name != "notes/a.md" || l.Files[0].Size != 5 {
		t.Fatalf("list: %s", out)
	}
	if out, _ = invoke(t, tools["list-files"], "granted", map[string]any{"space": "mcp-x", "pattern": "bl*"}); !strings.Contains(string(out), `"count":1`) || !strings.Contains(string(out), "test://bin") {
		t.Fatalf("pattern: %s", out)
	}
	if _, err := invoke(t, tools["list-files"], "granted", map[string]any{"space": "mcp-x", "dir": "sub"}); rejectCode(err) != CodeNotADirectory {
		t.Fatalf("dir: %v", err)
	}

	// By URI and by name; max_bytes cuts at a rune.
	for _, p := range []string{"test://notes/a", "notes/a.md"} {
		out, err := invoke(t, tools["read-file"], "granted", map[string]any{"space": "mcp-x", "path": p})
		if err != nil {
			t.Fatal(err)
		}
		var r readResult
		json.Unmarshal(out, &r)
		if r.Text != "héllo" || r.Path != "test://notes/a" || r.Size != 6 || r.Truncated {
			t.Fatalf("read %s: %s", p, out)
		}
	}
	out, _ = invoke(t, tools["read-file"], "granted", map[string]any{"space": "mcp-x", "path": "test://notes/a", "max_bytes": 2})
	if !strings.Contains(string(out), `"text":"h"`) || !strings.Contains(string(out), `"truncated":true`) {
		t.Fatalf("max_bytes: %s", out)
	}
	if _, err := invoke(t, tools["read-file"], "granted", map[string]any{"space": "mcp-x", "path": "test://bin"}); rejectCode(err) != CodeNotText {
		t.Fatalf("binary: %v", err)
	}
	if _, err := invoke(t, tools["read-file"], "granted", map[string]any{"space": "mcp-x", "path": "nope"}); rejectCode(err) != "not_found" {
		t.Fatalf("missing: %v", err)
	}

	// ReadSpace(mcp-x) alone is not enough: the server's grant is needed.
	for tool, params := range map[string]any{"list-files": map[string]any{"space": "mcp-x"}, "read-file": map[string]any{"space": "mcp-x", "path": "notes/a.md"}} {
		_, err := invoke(t, tools[tool], "space", params)
		var d *pipeline.ToolCapabilityDenied
		if !errors.As(err, &d) || len(d.Required) != 1 || d.Required[0] != (pipeline.Capability{Kind: "MCP", Arg: "x"}) {
			t.Fatalf("%s without MCP(x): %v", tool, err)
		}
		_, err = invoke(t, tools[tool], "nobody", params)
		if !errors.As(err, &d) || len(d.Required) != 2 {
			t.Fatalf("%s as nobody: %v", tool, err)
		}
	}
	// Read-only, and no folder: delete-file and pdf-extract refuse it.
	if _, err := invoke(t, tools["delete-file"], "granted", map[string]any{"space": "mcp-x", "path": "test://bin"}); rejectCode(err) != CodeBadParams {
		t.Fatalf("delete: %v", err)
	}
	if _, err := invoke(t, tools["pdf-extract"], "granted", map[string]any{"space": "mcp-x", "path": "test://bin"}); rejectCode(err) != CodeBadParams {
		t.Fatalf("pdf: %v", err)
	}
}

func TestRemoteSpaceNameClash(t *testing.T) {
	_, err := Tools(Options{Spaces: map[string]string{"mcp-x": t.TempDir()}, Remote: map[string]RemoteSpace{"mcp-x": {Remote: fakeRemote{}}}})
	if err == nil || !strings.Contains(err.Error(), `"mcp-x" is both`) {
		t.Fatalf("clash: %v", err)
	}
}
