package builtin

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/airs-dev/airs/pipeline"
)

// Every builtin says honestly what a call does: the one that deletes is
// destructive and not idempotent, the others read only.
func TestBuiltinMetadataIsHonest(t *testing.T) {
	_, spaces := fixture(t)
	for name, e := range testTools(t, spaces) {
		tl := e.Tool
		if tl.ReadOnly && tl.Destructive {
			t.Errorf("%s: both read-only and destructive", name)
		}
		switch name {
		case "delete-file":
			if !tl.Destructive || tl.ReadOnly || tl.Idempotent {
				t.Errorf("delete-file: destructive %v read_only %v idempotent %v, want true false false", tl.Destructive, tl.ReadOnly, tl.Idempotent)
			}
			if len(tl.CapabilityRequired) != 1 || tl.CapabilityRequired[0] != (pipeline.Capability{Kind: KindWriteSpace, Arg: "$space"}) {
				t.Errorf("delete-file requires %v, want WriteSpace($space)", tl.CapabilityRequired)
			}
		default:
			if !tl.ReadOnly || tl.Destructive || !tl.Idempotent {
				t.Errorf("%s: read_only %v destructive %v idempotent %v, want true false true", name, tl.ReadOnly, tl.Destructive, tl.Idempotent)
			}
		}
	}
}

func TestDeleteFile(t *testing.T) {
	base, spaces := fixture(t)
	doc := spaces["documents"]
	del := testTools(t, spaces)["delete-file"]

	out, err := invoke(t, del, "editor", map[string]any{"space": "documents", "path": "papers/x.pdf"})
	if err != nil {
		t.Fatal(err)
	}
	var r deleteResult
	if err := json.Unmarshal(out, &r); err != nil || r != (deleteResult{Space: "documents", Path: "papers/x.pdf", Size: 2, Deleted: true}) {
		t.Fatalf("result %s (%v)", out, err)
	}
	if _, err := os.Stat(filepath.Join(doc, "papers", "x.pdf")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("papers/x.pdf still there: %v", err)
	}
	// A second call finds nothing: not idempotent, and says so.
	if _, err := invoke(t, del, "editor", map[string]any{"space": "documents", "path": "papers/x.pdf"}); rejectCode(err) != CodeNotFound {
		t.Errorf("second delete: %v, want not_found", err)
	}

	// A symlink is removed itself; its target stays.
	if _, err := invoke(t, del, "editor", map[string]any{"space": "documents", "path": "link-out.txt"}); err != nil {
		t.Fatalf("delete the link: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(doc, "link-out.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("link still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "secret", "key.txt")); err != nil {
		t.Errorf("the link's target outside the space was touched: %v", err)
	}

	for _, tc := range []struct {
		agent, space, path, code string
		denied                   bool
	}{
		{"editor", "documents", "../secret/key.txt", CodePathEscape, false},
		{"editor", "documents", "/etc/passwd", CodePathEscape, false},
		{"editor", "documents", "link-dir-out/key.txt", CodePathEscape, false}, // through a symlinked folder outside
		{"editor", "documents", "papers", CodeNotAFile, false},                 // a folder
		{"editor", "documents", ".", CodeNotAFile, false},
		{"editor", "nowhere", "a.txt", CodeUnknownSpace, false},
		{"editor", "downloads", "d.txt", "", true}, // WriteSpace(documents) only
		{"root", "documents", "a.txt", "", true},   // ReadSpace(*) is not WriteSpace
		{"alice", "documents", "a.txt", "", true},
	} {
		_, err := invoke(t, del, tc.agent, map[string]any{"space": tc.space, "path": tc.path})
		if tc.denied {
			if !errors.Is(err, pipeline.ErrToolCapabilityDenied) {
				t.Errorf("%s deletes %s/%s: %v, want tool_capability_denied", tc.agent, tc.space, tc.path, err)
			}
			continue
		}
		if rejectCode(err) != tc.code {
			t.Errorf("%s deletes %s/%s: %v, want %s", tc.agent, tc.space, tc.path, err, tc.code)
		}
	}
	for _, p := range []string{filepath.Join(base, "secret", "key.txt"), filepath.Join(base, "downloads", "d.txt"), filepath.Join(doc, "a.txt"), filepath.Join(doc, "papers", "deep", "y.pdf")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was deleted by a refused call: %v", p, err)
		}
	}
	if got := RequiredFor("delete-file", []byte(`{"space":"documents","path":"a"}`)); len(got) != 1 || got[0].Kind != KindWriteSpace {
		t.Errorf("RequiredFor(delete-file) = %v", got)
	}
}
