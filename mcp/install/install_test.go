//go:build unix

package install

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The test binary is also a fake npm (fakeNPM): npm's environment keeps
// npm_config_* variables, so one of them turns it on.
const (
	envFakeNPM  = "npm_config_airs_fake_npm"         // the log of invocations
	envFakeDep  = "npm_config_airs_fake_dep"         // the version the "registry" resolves dep to
	envNoInteg  = "npm_config_airs_fake_nointegrity" // dep locked without integrity
	envSecretIn = "AIRS_TEST_SECRET"
)

func TestMain(m *testing.M) {
	if log := os.Getenv(envFakeNPM); log != "" {
		if err := fakeNPM(log, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "fake npm:", err)
			os.Exit(9)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeNPM does what npm does to a folder, offline: `install
// --package-lock-only` resolves package.json's one dependency, with a
// dependency of its own (dep, at $npm_config_airs_fake_dep), into a lock
// file; `ci` lays the lock out under node_modules. It refuses to run
// without --ignore-scripts, and logs each invocation with whether it saw
// AIRS's secret.
func fakeNPM(log string, args []string) error {
	var dir string
	for i, a := range args {
		if a == "--prefix" && i+1 < len(args) {
			dir = args[i+1]
		}
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, secret := os.LookupEnv(envSecretIn)
	fmt.Fprintf(f, "%s secret=%v\n", strings.Join(args, " "), secret)
	f.Close()
	if !slices.Contains(args, "--ignore-scripts") {
		return fmt.Errorf("install scripts not disabled")
	}
	switch {
	case args[0] == "install" && slices.Contains(args, "--package-lock-only"):
		var pj struct {
			Dependencies map[string]string `json:"dependencies"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &pj); err != nil {
			return err
		}
		dep := os.Getenv(envFakeDep)
		if dep == "" {
			dep = "1.0.0"
		}
		pkgs := map[string]any{"": map[string]any{"dependencies": pj.Dependencies}}
		for name, v := range pj.Dependencies {
			pkgs["node_modules/"+name] = map[string]any{"version": v, "integrity": "sha512-" + name + "@" + v, "bin": map[string]string{"x": "dist/index.js"}}
		}
		d := map[string]any{"version": dep, "integrity": "sha512-dep@" + dep}
		if os.Getenv(envNoInteg) != "" {
			delete(d, "integrity")
		}
		pkgs["node_modules/dep"] = d
		out, _ := json.Marshal(map[string]any{"lockfileVersion": 3, "packages": pkgs})
		return os.WriteFile(filepath.Join(dir, "package-lock.json"), out, 0o644)
	case args[0] == "ci":
		var lock struct {
			Packages map[string]struct {
				Version string `json:"version"`
			} `json:"packages"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &lock); err != nil {
			return err
		}
		for path, p := range lock.Packages {
			if path == "" {
				continue
			}
			root := filepath.Join(dir, path)
			os.MkdirAll(filepath.Join(root, "dist"), 0o755)
			name := strings.TrimPrefix(path, "node_modules/")
			os.WriteFile(filepath.Join(root, "dist", "index.js"), []byte(`console.log("`+name+"@"+p.Version+`")`), 0o644)
			os.WriteFile(filepath.Join(root, "package.json"), []byte(`{"name":"`+name+`","version":"`+p.Version+`","bin":{"x":"dist/index.js"}}`), 0o644)
		}
		return nil
	}
	return fmt.Errorf("unexpected: npm %s", strings.Join(args, " "))
}

// fakeEnv turns the fake npm on and returns its log.
func fakeEnv(t *testing.T) (npm, log string) {
	log = filepath.Join(t.TempDir(), "npm.log")
	t.Setenv(envFakeNPM, log)
	return os.Args[0], log
}

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

func TestInstallVerifyRemove(t *testing.T) {
	home := t.TempDir()
	npm, log := fakeEnv(t)
	t.Setenv(envSecretIn, "hunter2")
	s, err := Install(context.Background(), home, Server{Name: "srv", Package: "@a/server-b", Version: "1.0.0"}, npm, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if s.Integrity != "sha512-@a/server-b@1.0.0" || s.Lock == "" || s.Packages != 2 || len(s.Command) != 2 ||
		!strings.HasSuffix(s.Command[1], "node_modules/@a/server-b/dist/index.js") || s.Approved {
		t.Fatalf("installed %+v", s)
	}
	// The tree from a lock: resolved first, then installed with npm ci;
	// npm never saw AIRS's secret.
	calls, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "install --package-lock-only") || !strings.HasPrefix(lines[1], "ci ") || strings.Contains(string(calls), "secret=true") {
		t.Fatalf("npm was run as:\n%s", calls)
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
	// A changed file of a dependency fails the check.
	depFile := filepath.Join(home, "mcp", "npm", "srv", "node_modules", "dep", "dist", "index.js")
	orig, _ := os.ReadFile(depFile)
	os.WriteFile(depFile, []byte("console.log('changed')"), 0o644)
	if err := Verify(home, s); err == nil || !strings.Contains(err.Error(), "files changed") {
		t.Fatalf("tampered file: %v", err)
	}
	// So does the same content made executable.
	os.WriteFile(depFile, orig, 0o644)
	if err := Verify(home, s); err != nil {
		t.Fatalf("restored: %v", err)
	}
	os.Chmod(depFile, 0o755)
	if err := Verify(home, s); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("a file made executable: %v", err)
	}
	os.Chmod(depFile, 0o644)
	// A changed lock (another tree) fails it too.
	lock := filepath.Join(home, "mcp", "npm", "srv", "package-lock.json")
	b, _ := os.ReadFile(lock)
	os.WriteFile(lock, []byte(strings.Replace(string(b), "dep@1.0.0", "dep@1.0.1", 1)), 0o644)
	if err := Verify(home, s); err == nil || !strings.Contains(err.Error(), "lock file changed") {
		t.Fatalf("changed lock: %v", err)
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
	// A record from before locks is refused, saying what to do.
	if err := Verify(home, Server{Name: "old", Package: "p", Version: "1.0.0", Integrity: "sha512-x", Tree: "abc"}); err == nil || !strings.Contains(err.Error(), "reinstall") {
		t.Fatalf("a record without a lock: %v", err)
	}
}

// TestInstallPinsTheWholeTree: the registry publishing a new version of a
// dependency changes nothing of a later install of the same version: it
// starts from the lock kept at the first.
func TestInstallPinsTheWholeTree(t *testing.T) {
	home := t.TempDir()
	npm, log := fakeEnv(t)
	spec := Server{Name: "srv", Package: "@a/server-b", Version: "1.0.0"}
	if _, err := Install(context.Background(), home, spec, npm, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := Remove(home, "srv"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envFakeDep, "1.0.1") // dep 1.0.1 is out, other code
	os.Remove(log)
	s, err := Install(context.Background(), home, spec, npm, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := Packages(home, s)
	if err != nil || !slices.Contains(pkgs, Package{Name: "dep", Version: "1.0.0", Integrity: "sha512-dep@1.0.0"}) {
		t.Fatalf("reinstalled tree: %+v %v (want dep 1.0.0, as locked)", pkgs, err)
	}
	if calls, _ := os.ReadFile(log); strings.Contains(string(calls), "package-lock-only") || !strings.HasPrefix(string(calls), "ci ") {
		t.Fatalf("the reinstall resolved again:\n%s", calls)
	}
	// Another name, another version, is resolved afresh.
	if s, err := Install(context.Background(), home, Server{Name: "srv2", Package: "@a/server-b", Version: "1.0.1"}, npm, io.Discard); err != nil {
		t.Fatal(err)
	} else if pkgs, _ := Packages(home, s); !slices.ContainsFunc(pkgs, func(p Package) bool { return p.Name == "dep" && p.Version == "1.0.1" }) {
		t.Fatalf("a new version's tree: %+v", pkgs)
	}
}

// TestInstallRefusesAnUnpinnedTree: a package the lock gives no integrity
// for could be anything next time: nothing is installed.
func TestInstallRefusesAnUnpinnedTree(t *testing.T) {
	home := t.TempDir()
	npm, _ := fakeEnv(t)
	t.Setenv(envNoInteg, "1")
	_, err := Install(context.Background(), home, Server{Name: "srv", Package: "@a/server-b", Version: "1.0.0"}, npm, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no integrity hash for dep@1.0.0") {
		t.Fatalf("unpinned dependency: %v", err)
	}
	if list, _ := Load(home); len(list) != 0 {
		t.Fatalf("recorded: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(home, "mcp", "npm", "srv")); !os.IsNotExist(err) {
		t.Fatal("files left")
	}
}
