package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// fixture lays out:
//
//	base/
//	  documents/            space "documents"
//	    a.txt  b.pdf  notes.md
//	    papers/x.pdf  papers/deep/y.pdf
//	    latin1.txt  blob.bin  big.txt
//	    link-in.txt -> a.txt                   (inside: allowed)
//	    link-out.txt -> ../secret/key.txt      (outside: refused)
//	    link-dir-out -> ../secret              (outside: refused)
//	    link-abs -> /etc/passwd  (absolute: refused)
//	  secret/key.txt         not in any space
//	  downloads/d.txt        space "downloads"
func fixture(t *testing.T) (base string, spaces map[string]string) {
	t.Helper()
	base = t.TempDir()
	doc := filepath.Join(base, "documents")
	writeFile(t, filepath.Join(doc, "a.txt"), []byte("hello world\n"))
	writeFile(t, filepath.Join(doc, "b.pdf"), []byte("%PDF-1.4 not really"))
	writeFile(t, filepath.Join(doc, "notes.md"), []byte("# Notes\n"))
	writeFile(t, filepath.Join(doc, "papers", "x.pdf"), []byte("xx"))
	writeFile(t, filepath.Join(doc, "papers", "deep", "y.pdf"), []byte("yyy"))
	writeFile(t, filepath.Join(doc, "latin1.txt"), []byte("caf\xe9\n"))
	writeFile(t, filepath.Join(doc, "blob.bin"), []byte("ab\x00cd"))
	writeFile(t, filepath.Join(doc, "big.txt"), []byte(strings.Repeat("é", 1000))) // 2000 bytes
	writeFile(t, filepath.Join(base, "secret", "key.txt"), []byte("TOP SECRET"))
	writeFile(t, filepath.Join(base, "downloads", "d.txt"), []byte("download"))
	for link, target := range map[string]string{
		"link-in.txt":  "a.txt",
		"link-out.txt": "../secret/key.txt",
		"link-dir-out": "../secret",
		"link-abs":     "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(doc, link)); err != nil {
			t.Skipf("symlinks unsupported here: %v", err)
		}
	}
	mt := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(doc, "a.txt"), mt, mt); err != nil {
		t.Fatal(err)
	}
	return base, map[string]string{"documents": doc, "downloads": filepath.Join(base, "downloads")}
}

func TestListFiles(t *testing.T) {
	_, spaces := fixture(t)
	tools := testTools(t, spaces)
	lf := tools["list-files"]

	out, err := invoke(t, lf, "alice", map[string]any{"space": "documents"})
	if err != nil {
		t.Fatal(err)
	}
	r := decode[listResult](t, out)
	var names []string
	for _, f := range r.Files {
		names = append(names, f.Path)
	}
	// Links resolving outside (or to nowhere inside) are skipped, the link
	// inside is listed as the file it points to; subfolders are listed, not
	// entered.
	want := []string{"a.txt", "b.pdf", "big.txt", "blob.bin", "latin1.txt", "link-in.txt", "notes.md", "papers"}
	if !slices.Equal(names, want) {
		t.Fatalf("listed %v, want %v", names, want)
	}
	if r.Skipped != 3 {
		t.Errorf("skipped = %d, want 3 (link-out.txt, link-dir-out, link-abs)", r.Skipped)
	}
	for _, f := range r.Files {
		switch f.Path {
		case "a.txt":
			if f.Size != 12 || f.Type != "file" || !f.ModTime.Equal(time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)) {
				t.Errorf("a.txt: %+v", f)
			}
		case "link-in.txt":
			if f.Size != 12 || f.Type != "file" {
				t.Errorf("link-in.txt: %+v", f)
			}
		case "papers":
			if f.Type != "dir" {
				t.Errorf("papers: %+v", f)
			}
		}
	}

	// Glob on names, recursive.
	out, err = invoke(t, lf, "alice", map[string]any{"space": "documents", "pattern": "*.pdf", "recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	r = decode[listResult](t, out)
	names = names[:0]
	for _, f := range r.Files {
		names = append(names, f.Path)
	}
	if want := []string{"b.pdf", "papers/deep/y.pdf", "papers/x.pdf"}; !slices.Equal(names, want) {
		t.Fatalf("*.pdf recursive: %v, want %v", names, want)
	}

	// A pattern with a slash matches the path relative to dir.
	out, err = invoke(t, lf, "alice", map[string]any{"space": "documents", "pattern": "papers/*.pdf", "recursive": true})
	if err != nil {
		t.Fatal(err)
	}
	if r = decode[listResult](t, out); r.Count != 1 || r.Files[0].Path != "papers/x.pdf" {
		t.Fatalf("papers/*.pdf: %+v", r.Files)
	}

	// dir, non-recursive.
	out, err = invoke(t, lf, "alice", map[string]any{"space": "documents", "dir": "papers"})
	if err != nil {
		t.Fatal(err)
	}
	if r = decode[listResult](t, out); r.Count != 2 || r.Files[0].Path != "papers/deep" || r.Files[1].Path != "papers/x.pdf" || r.Files[1].Size != 2 {
		t.Fatalf("dir papers: %+v", r.Files)
	}

	// limit
	out, err = invoke(t, lf, "alice", map[string]any{"space": "documents", "limit": 2})
	if err != nil {
		t.Fatal(err)
	}
	if r = decode[listResult](t, out); r.Count != 2 || !r.Truncated {
		t.Fatalf("limit 2: %+v", r)
	}

	// errors
	for _, c := range []struct {
		params map[string]any
		code   string
	}{
		{map[string]any{"space": "documents", "pattern": "[a-"}, CodeBadParams},
		{map[string]any{"space": "documents", "dir": "a.txt"}, CodeNotADirectory},
		{map[string]any{"space": "documents", "dir": "nope"}, CodeNotFound},
		{map[string]any{"space": "nowhere"}, CodeUnknownSpace},
		{map[string]any{"space": "documents", "dir": "link-dir-out"}, CodePathEscape},
	} {
		_, err := invoke(t, lf, "alice", c.params)
		if got := rejectCode(err); got != c.code {
			t.Errorf("%v: %v (code %q), want %q", c.params, err, got, c.code)
		}
	}
}

func TestSpaceCapability(t *testing.T) {
	_, spaces := fixture(t)
	tools := testTools(t, spaces)
	for _, name := range []string{"list-files", "read-file", "pdf-extract"} {
		params := map[string]any{"space": "documents"}
		if name != "list-files" {
			params["path"] = "a.txt"
		}
		// alice holds ReadSpace(documents) only; bob holds nothing.
		for _, c := range []struct {
			agent, space string
			denied       bool
		}{
			{"alice", "documents", false},
			{"alice", "downloads", true},
			{"bob", "documents", true},
			{"", "documents", true},
			{"root", "downloads", false},
		} {
			params["space"] = c.space
			if name != "list-files" && c.space == "downloads" {
				params["path"] = "d.txt"
			} else if name != "list-files" {
				params["path"] = "a.txt"
			}
			_, err := invoke(t, tools[name], c.agent, params)
			var denied *pipeline.ToolCapabilityDenied
			isDenied := errors.As(err, &denied)
			if isDenied != c.denied {
				t.Errorf("%s as %q on %s: err %v, want denied=%v", name, c.agent, c.space, err, c.denied)
				continue
			}
			if isDenied {
				want := pipeline.Capability{Kind: "ReadSpace", Arg: c.space}
				if len(denied.Required) != 1 || denied.Required[0] != want || !errors.Is(err, pipeline.ErrToolCapabilityDenied) {
					t.Errorf("%s: denied %+v, want %v", name, denied.Required, want)
				}
			}
		}
	}
	// RequiredFor states the same rule for a pipeline stage.
	got := RequiredFor("read-file", []byte(`{"space":"downloads","path":"d.txt"}`))
	if len(got) != 1 || got[0] != (pipeline.Capability{Kind: "ReadSpace", Arg: "downloads"}) {
		t.Errorf("RequiredFor = %v", got)
	}
	if RequiredFor("calculator", []byte(`{"expression":"1"}`)) != nil {
		t.Error("RequiredFor(calculator) should be nil")
	}
}

func TestPathEscapes(t *testing.T) {
	_, spaces := fixture(t)
	tools := testTools(t, spaces)
	rf := tools["read-file"]
	for _, p := range []string{
		"../secret/key.txt",
		"papers/../../secret/key.txt",
		"papers/../a.txt", // stays inside, but ".." is refused outright
		"..",
		"/etc/passwd",
		filepath.Join(spaces["documents"], "a.txt"), // absolute, even inside
		`..\secret\key.txt`,
		"a.txt\x00",
		"link-out.txt",         // symlink to a file outside
		"link-dir-out/key.txt", // through a symlinked folder outside
		"link-abs",             // symlink to an absolute path
	} {
		out, err := invoke(t, rf, "root", map[string]any{"space": "documents", "path": p})
		if code := rejectCode(err); code != CodePathEscape {
			t.Errorf("read-file %q: %s, %v (code %q), want %s", p, out, err, code, CodePathEscape)
		}
		if strings.Contains(string(out), "SECRET") || (err != nil && strings.Contains(err.Error(), "SECRET")) {
			t.Errorf("read-file %q leaked the secret", p)
		}
	}
	// The same checks guard list-files' dir and pdf-extract's path.
	for _, c := range []struct {
		tool   string
		params map[string]any
	}{
		{"list-files", map[string]any{"space": "documents", "dir": "../secret"}},
		{"list-files", map[string]any{"space": "documents", "dir": "/"}},
		{"list-files", map[string]any{"space": "documents", "dir": "link-dir-out"}},
		{"pdf-extract", map[string]any{"space": "documents", "path": "../secret/key.txt"}},
		{"pdf-extract", map[string]any{"space": "documents", "path": "link-out.txt"}},
	} {
		_, err := invoke(t, tools[c.tool], "root", c.params)
		if code := rejectCode(err); code != CodePathEscape {
			t.Errorf("%s %v: %v (code %q), want %s", c.tool, c.params, err, code, CodePathEscape)
		}
	}
	// A link that stays inside works.
	out, err := invoke(t, rf, "alice", map[string]any{"space": "documents", "path": "link-in.txt"})
	if err != nil || decode[readResult](t, out).Text != "hello world\n" {
		t.Fatalf("link-in.txt: %s %v", out, err)
	}
}

// A symlink swapped in after the path was checked must not let a read
// escape: os.Root resolves every component at open time. This loops a
// writer that flips a link between inside and outside targets while reads
// run, and checks no read ever returns the secret.
func TestSymlinkSwapRace(t *testing.T) {
	base, spaces := fixture(t)
	tools := testTools(t, spaces)
	doc := spaces["documents"]
	link := filepath.Join(doc, "flip")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ctx.Err() == nil; i++ {
			target := "a.txt"
			if i%2 == 1 {
				target = filepath.Join(base, "secret", "key.txt")
			}
			tmp := link + ".tmp"
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				os.Rename(tmp, link)
			}
		}
	}()
	defer func() { cancel(); <-done }()
	for range 300 {
		out, _ := tools["read-file"].Handler.Invoke(ctx, json.RawMessage(`{"space":"documents","path":"flip"}`), &pipeline.Call{Caller: "alice"})
		if strings.Contains(string(out), "SECRET") {
			t.Fatal("read through a swapped symlink escaped the space")
		}
	}
}

func TestReadFile(t *testing.T) {
	_, spaces := fixture(t)
	tools := testTools(t, spaces)
	rf := tools["read-file"]

	out, err := invoke(t, rf, "alice", map[string]any{"space": "documents", "path": "a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if r := decode[readResult](t, out); r.Text != "hello world\n" || r.Size != 12 || r.Truncated || r.Path != "a.txt" {
		t.Fatalf("a.txt: %+v", r)
	}
	// "./papers/../" style is refused, but "./a.txt" is just cleaned.
	out, err = invoke(t, rf, "alice", map[string]any{"space": "documents", "path": "./a.txt"})
	if err != nil || decode[readResult](t, out).Path != "a.txt" {
		t.Fatalf("./a.txt: %s %v", out, err)
	}

	// A cap that falls in the middle of "é" (2 bytes) cuts before it.
	out, err = invoke(t, rf, "alice", map[string]any{"space": "documents", "path": "big.txt", "max_bytes": 101})
	if err != nil {
		t.Fatal(err)
	}
	r := decode[readResult](t, out)
	if !r.Truncated || r.Size != 2000 || r.Text != strings.Repeat("é", 50) {
		t.Fatalf("big.txt capped: truncated=%v size=%d len=%d", r.Truncated, r.Size, len(r.Text))
	}

	for _, c := range []struct {
		path, code string
	}{
		{"latin1.txt", CodeNotText},
		{"blob.bin", CodeNotText},
		{"papers", CodeNotAFile},
		{"missing.txt", CodeNotFound},
	} {
		_, err := invoke(t, rf, "alice", map[string]any{"space": "documents", "path": c.path})
		if got := rejectCode(err); got != c.code {
			t.Errorf("%s: %v (code %q), want %q", c.path, err, got, c.code)
		}
	}
	_, err = invoke(t, rf, "alice", map[string]any{"space": "documents", "path": "a.txt", "max_bytes": 0})
	if rejectCode(err) != CodeBadParams {
		t.Errorf("max_bytes 0: %v", err)
	}
}

func TestTrimPartialRune(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"abc", "abc"},
		{"ab\xc3", "ab"},              // first byte of é
		{"ab\xe2\x82", "ab"},          // 2 of 3 bytes of €
		{"ab\xe2\x82\xac", "ab€"},     // whole €
		{"ab\xf0\x9f\x98", "ab"},      // 3 of 4 bytes of 😀
		{"ab\xf0\x9f\x98\x80", "ab😀"}, // whole
		{"", ""},
	} {
		if got := string(trimPartialRune([]byte(c.in))); got != c.want {
			t.Errorf("trimPartialRune(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestListFilesCancelled(t *testing.T) {
	_, spaces := fixture(t)
	tools := testTools(t, spaces)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := tools["list-files"].Handler.Invoke(ctx, json.RawMessage(`{"space":"documents","recursive":true}`), &pipeline.Call{Caller: "alice"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r := decode[listResult](t, out); !r.Truncated {
		t.Fatalf("partial output not marked truncated: %s", out)
	}
}

// read-file's piecewise encoding is byte for byte json.Marshal's, and its
// chunked read is io.ReadAll's, whatever the sizes.
func TestReadFileEncodingAndChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	alphabet := []string{"a", "é", "€", "😀", "<", ">", "&", "\"", "\\", "\n", "\t", "\x01", "\u2028", "\u2029", " "}
	for _, n := range []int{0, 1, 100, 64<<10 - 1, 64 << 10, 64<<10 + 1, 300_000} {
		var sb strings.Builder
		for sb.Len() < n {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		rr := readResult{Space: "docs<&>", Path: "a/\"b\".txt", Size: int64(n), Text: sb.String(), Truncated: n%2 == 0}
		want, _ := json.Marshal(rr)
		got, err := readResultJSON(context.Background(), rr)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: readResultJSON differs from json.Marshal (%v)", n, err)
		}
		data := []byte(sb.String())
		for _, expect := range []int64{1, int64(len(data)) + 1, int64(len(data)) / 2} {
			for _, limit := range []int64{int64(len(data)) + 1, int64(len(data)/3) + 1} {
				got, err := readAllCtx(context.Background(), bytes.NewReader(data), max(expect, 1), limit)
				if err != nil || !bytes.Equal(got, data[:min(int64(len(data)), limit)]) {
					t.Fatalf("readAllCtx(%d bytes, expect %d, max %d): %d bytes, %v", len(data), expect, limit, len(got), err)
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readResultJSON(ctx, readResult{Text: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled encoding: %v", err)
	}
	if _, err := readAllCtx(ctx, bytes.NewReader([]byte("x")), 2, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
}
