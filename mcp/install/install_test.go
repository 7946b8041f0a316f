//go:build unix

package install

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	pkg, v, err := ParseSpec("npm:@modelcontextprotocol/server-filesystem@2026.8.31")
	if err != nil || pkg != "@modelcontextprotocol/server-filesystem" || v != "2026.8.31" {
		t.Fatalf("%q %q %v", pkg, v, err)
	}
	for _, bad := range []string{"@x/y@1.2.3", "npm:@x/y", "npm:y@^1.2.0", "npm:y@latest", "npm:Y!@1.0.0"} {
		if _, _, err := ParseSpec(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if n := DefaultName("@modelcontextprotocol/server-filesystem"); n != "filesystem" {
		t.Errorf("DefaultName = %q", n)
	}
}

// fakeNPM writes an npm that "installs" a package as npm lays it out, and
// refuses to unless install scripts are off.
func fakeNPM(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "npm")
	script := `#!/bin/sh
for a; do case "$prev" in --prefix) dir=$a;; esac; prev=$a; last=$a; done
case "$*" in *--ignore-scripts*) ;; *) echo "install scripts not disabled" >&2; exit 9;; esac
pkg=${last%@*}; ver=${last##*@}
mkdir -p "$dir/node_modules/$pkg/dist"
echo 'console.log("server")' > "$dir/node_modules/$pkg/dist/index.js"
echo '{"name":"'$pkg'","version":"'$ver'","bin":{"x":"dist/index.js"}}' > "$dir/node_modules/$pkg/package.json"
echo '{"packages":{"node_modules/'$pkg'":{"version":"'$ver'","integrity":"sha512-fake"}}}' > "$dir/package-lock.json"
`
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestInstallVerifyRemove(t *testing.T) {
	home := t.TempDir()
	npm := fakeNPM(t)
	s, err := Install(context.Background(), home, Server{Name: "srv", Package: "@a/server-b", Version: "1.0.0"}, npm, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Integrity != "sha512-fake" || len(s.Command) != 2 || !strings.HasSuffix(s.Command[1], "node_modules/@a/server-b/dist/index.js") || s.Approved {
		t.Fatalf("installed %+v", s)
	}
	if _, err := Install(context.Background(), home, Server{Name: "srv", Package: "@a/server-b", Version: "1.0.0"}, npm, io.Discard); err == nil {
		t.Fatal("installed twice under one name")
	}
	if err := Verify(home, s); err != nil {
		t.Fatalf("fresh install fails its check: %v", err)
	}
	if err := Approve(home, "srv"); err != nil {
		t.Fatal(err)
	}
	if list, _ := Load(home); len(list) != 1 || !list[0].Approved {
		t.Fatalf("after approve: %+v", list)
	}
	// A changed file fails the check.
	os.WriteFile(s.Command[1], []byte("console.log('changed')"), 0o644)
	if err := Verify(home, s); err == nil || !strings.Contains(err.Error(), "files changed") {
		t.Fatalf("tampered file: %v", err)
	}
	// A changed lock (another tarball) fails it too.
	lock := filepath.Join(home, "mcp", "npm", "srv", "package-lock.json")
	os.WriteFile(lock, []byte(`{"packages":{"node_modules/@a/server-b":{"version":"1.0.0","integrity":"sha512-other"}}}`), 0o644)
	if err := Verify(home, s); err == nil || !strings.Contains(err.Error(), "integrity") {
		t.Fatalf("changed integrity: %v", err)
	}
	if err := Remove(home, "srv"); err != nil {
		t.Fatal(err)
	}
	if list, _ := Load(home); len(list) != 0 {
		t.Fatalf("after remove: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp", "npm", "srv")); !os.IsNotExist(err) {
		t.Fatal("files left after remove")
	}
}
