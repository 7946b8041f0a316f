// Package install puts MCP servers from npm into AIRS_HOME, the whole
// dependency tree pinned, and nothing of the package run on the way:
//
//  1. npm resolves pkg@version into a lock file (npm install
//     --package-lock-only --ignore-scripts): every package of the tree
//     with its version and the registry's integrity hash. A tree with a
//     package the lock gives no integrity for is refused. The lock is kept
//     in $AIRS_HOME/mcp/locks, so a later install of the same version
//     starts from it and gets the same tree.
//  2. npm ci --ignore-scripts installs exactly that lock (npm checks each
//     tarball against its integrity).
//  3. The record keeps the lock's hash and a hash of every installed file
//     and folder, modes included; both are checked each time AIRS starts
//     the server (Verify).
//
// npm runs with a minimal environment (npmEnv), and the package's own code
// does not run at all until the user says yes, after a review; it is
// offered only once the user approved its tools (Approve).
//
// The record is $AIRS_HOME/mcp/installed.json; each server's files are in
// $AIRS_HOME/mcp/npm/NAME.
package install

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Server is one installed server.
type Server struct {
	Name      string   `json:"name"`
	Package   string   `json:"package"`
	Version   string   `json:"version"`
	Integrity string   `json:"integrity"`   // the registry's (package-lock.json), e.g. sha512-…
	Lock      string   `json:"lock_sha256"` // of package-lock.json: the whole tree, each package's integrity
	Packages  int      `json:"packages"`    // in the tree, the server's own included
	Tree      string   `json:"tree_sha256"` // of every file and folder under node_modules (content and mode), at install
	Command   []string `json:"command"`     // node and the package's bin
	Args      []string `json:"args,omitempty"`
	Requires  []string `json:"requires,omitempty"` // capabilities its tools require beside MCP(NAME)
	Approved  bool     `json:"approved"`           // the user reviewed it and said yes
}

var (
	versionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
	pkgRE     = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*$`)
	nameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
)

// ParseSpec reads npm:PACKAGE@VERSION; the version must be exact.
func ParseSpec(spec string) (pkg, version string, err error) {
	rest, ok := strings.CutPrefix(spec, "npm:")
	if !ok {
		return "", "", fmt.Errorf("%q: say npm:PACKAGE@VERSION (npm is the only source so far)", spec)
	}
	i := strings.LastIndexByte(rest, '@')
	if i <= 0 {
		return "", "", fmt.Errorf("%q: pin an exact version, e.g. npm:%s@1.2.3 (`npm view %s version` shows the latest)", spec, rest, rest)
	}
	pkg, version = rest[:i], rest[i+1:]
	if !pkgRE.MatchString(pkg) {
		return "", "", fmt.Errorf("%q is not an npm package name", pkg)
	}
	if !versionRE.MatchString(version) {
		return "", "", fmt.Errorf("%q: the version must be exact (1.2.3), not a range or tag, so that what runs is what was reviewed", spec)
	}
	return pkg, version, nil
}

// DefaultName is the server name for a package: its last part without a
// "server-" or "mcp-server-" prefix (@modelcontextprotocol/server-filesystem
// → filesystem).
func DefaultName(pkg string) string {
	n := pkg[strings.LastIndexByte(pkg, '/')+1:]
	for _, p := range []string{"mcp-server-", "server-"} {
		n = strings.TrimPrefix(n, p)
	}
	n = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, n)
	return strings.Trim(n, "-")
}

func dir(home string) string             { return filepath.Join(home, "mcp") }
func recordPath(home string) string      { return filepath.Join(dir(home), "installed.json") }
func serverDir(home, name string) string { return filepath.Join(dir(home), "npm", name) }

// Load reads the installed servers (none when nothing was installed).
func Load(home string) ([]Server, error) {
	b, err := os.ReadFile(recordPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Server
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v): remove it and install the servers again", recordPath(home), err)
	}
	return out, nil
}

func save(home string, list []Server) error {
	slices.SortFunc(list, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir(home), 0o700); err != nil {
		return err
	}
	tmp := recordPath(home) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, recordPath(home))
}

// Install installs pkg@version's whole tree from a lock file with
// integrity hashes into the server's folder and records it (not
// approved). Nothing of the package runs. npm is the npm client on $PATH
// unless npmBin says otherwise.
func Install(ctx context.Context, home string, s Server, npmBin string, out io.Writer) (Server, error) {
	name, pkg, version := s.Name, s.Package, s.Version
	if !nameRE.MatchString(name) || name == "builtin" {
		return Server{}, fmt.Errorf("server name %q: letters, digits, _ or - (say another with --name)", name)
	}
	list, err := Load(home)
	if err != nil {
		return Server{}, err
	}
	if slices.ContainsFunc(list, func(s Server) bool { return s.Name == name }) {
		return Server{}, fmt.Errorf("a server named %s is installed already: `airs tools remove %s` first, or choose --name", name, name)
	}
	if npmBin == "" {
		npmBin = "npm"
	}
	d := serverDir(home, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return Server{}, err
	}
	fail := func(err error) (Server, error) {
		os.RemoveAll(d)
		return Server{}, err
	}
	manifest, _ := json.MarshalIndent(map[string]any{"name": "airs-mcp-" + strings.ToLower(name), "private": true,
		"dependencies": map[string]string{pkg: version}}, "", "  ")
	if err := os.WriteFile(filepath.Join(d, "package.json"), append(manifest, '\n'), 0o600); err != nil {
		return fail(err)
	}
	npm := func(args ...string) error {
		cmd := exec.CommandContext(ctx, npmBin, append(args, "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", d)...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = d, npmEnv(), out, out
		return cmd.Run()
	}
	lockPath := filepath.Join(d, "package-lock.json")
	saved := savedLock(home, pkg, version)
	if b, err := os.ReadFile(saved); err == nil {
		// The tree of an earlier install of this version, as it was.
		if err := os.WriteFile(lockPath, b, 0o600); err != nil {
			return fail(err)
		}
	} else if err := npm("install", "--package-lock-only"); err != nil {
		return fail(fmt.Errorf("npm install --package-lock-only %s@%s: %v (its output is above)", pkg, version, err))
	}
	lock, err := readLock(d, pkg, version)
	if err != nil {
		return fail(err)
	}
	if err := npm("ci"); err != nil {
		return fail(fmt.Errorf("npm ci %s@%s from its lock file: %v (its output is above)", pkg, version, err))
	}
	s.Approved = false
	s.Integrity, s.Packages = lock.top.Integrity, len(lock.tree)
	if s.Lock, err = fileHash(lockPath); err != nil {
		return fail(err)
	}
	bin, err := binOf(d, pkg)
	if err != nil {
		return fail(err)
	}
	s.Command = []string{"node", bin}
	if s.Tree, err = treeHash(filepath.Join(d, "node_modules")); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(filepath.Dir(saved), 0o700); err == nil {
		if b, err := os.ReadFile(lockPath); err == nil {
			_ = os.WriteFile(saved, b, 0o600) // a later install starts from it; none is no harm
		}
	}
	if err := save(home, append(list, s)); err != nil {
		return Server{}, err
	}
	return s, nil
}

// npmEnv is npm's environment: what it needs to run and reach its
// registry (HOME for ~/.npmrc and its cache, PATH, proxies and the
// certificates they are trusted by, npm's own settings), not the secrets
// of AIRS's environment.
func npmEnv() []string {
	keep := []string{"HOME", "PATH", "LANG", "USER", "LOGNAME", "TMPDIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy",
		"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR"}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(keep, k) || strings.HasPrefix(strings.ToLower(k), "npm_config_") {
			env = append(env, kv)
		}
	}
	return env
}

// savedLock is where the lock of pkg@version is kept for later installs.
func savedLock(home, pkg, version string) string {
	return filepath.Join(dir(home), "locks", strings.ReplaceAll(pkg, "/", "+")+"@"+version+".json")
}

// Packages are the packages of an installed server's tree, as its lock
// file names them.
func Packages(home string, s Server) ([]Package, error) {
	l, err := readLock(serverDir(home, s.Name), s.Package, s.Version)
	if err != nil {
		return nil, err
	}
	return l.tree, nil
}

// Package is one package of a server's tree.
type Package struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Integrity string `json:"integrity"`
}

// Approve marks an installed server as reviewed and wanted: AIRS starts
// it from now on.
func Approve(home, name string) error {
	list, err := Load(home)
	if err != nil {
		return err
	}
	for i := range list {
		if list[i].Name == name {
			list[i].Approved = true
			return save(home, list)
		}
	}
	return fmt.Errorf("no installed server %s", name)
}

// Remove deletes an installed server's files and record.
func Remove(home, name string) error {
	list, err := Load(home)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(s Server) bool { return s.Name == name })
	if i < 0 {
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		return fmt.Errorf("no installed server %s (installed: %s)", name, strings.Join(append(names, "none")[:max(len(names), 1)], ", "))
	}
	if err := os.RemoveAll(serverDir(home, name)); err != nil {
		return err
	}
	return save(home, slices.Delete(list, i, i+1))
}

// Verify checks that the installed files are still those installed: the
// lock file (the whole tree and each package's integrity) and the hash of
// every file and folder under node_modules, content and mode.
func Verify(home string, s Server) error {
	d := serverDir(home, s.Name)
	reinstall := fmt.Sprintf("reinstall it (`airs tools remove %s`, then install)", s.Name)
	if s.Lock == "" {
		return fmt.Errorf("installed MCP server %s was installed without a lock of its whole tree (an older AIRS): %s", s.Name, reinstall)
	}
	lock, err := fileHash(filepath.Join(d, "package-lock.json"))
	if err != nil {
		return fmt.Errorf("installed MCP server %s: reading its lock file: %v: %s", s.Name, err, reinstall)
	}
	if lock != s.Lock {
		return fmt.Errorf("installed MCP server %s: its lock file changed since it was installed (another tree of packages): %s", s.Name, reinstall)
	}
	l, err := readLock(d, s.Package, s.Version)
	if err != nil {
		return err
	}
	if l.top.Integrity != s.Integrity {
		return fmt.Errorf("installed MCP server %s: %s@%s's integrity is %s, not the %s recorded at install: %s", s.Name, s.Package, s.Version, l.top.Integrity, s.Integrity, reinstall)
	}
	tree, err := treeHash(filepath.Join(d, "node_modules"))
	if err != nil {
		return err
	}
	if tree != s.Tree {
		return fmt.Errorf("installed MCP server %s: its files changed since it was installed (content or mode; hash %s, recorded %s): %s", s.Name, tree[:12], s.Tree[:12], reinstall)
	}
	return nil
}

// lockFile is what AIRS reads of npm's package-lock.json: the server's
// package and the whole tree.
type lockFile struct {
	top  Package
	tree []Package
}

// readLock reads the lock in d: lockfileVersion 2 or later, pkg at
// version, and an integrity hash for every package of the tree (one
// without could be anything at the next install).
func readLock(d, pkg, version string) (lockFile, error) {
	b, err := os.ReadFile(filepath.Join(d, "package-lock.json"))
	if err != nil {
		return lockFile{}, fmt.Errorf("reading npm's lock file: %w", err)
	}
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
		Packages        map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
			Link      bool   `json:"link"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return lockFile{}, fmt.Errorf("reading npm's lock file: %w", err)
	}
	if lock.LockfileVersion < 2 {
		return lockFile{}, fmt.Errorf("npm's lock file is version %d: AIRS needs version 2 or later (npm 7 or later), which lists every package of the tree", lock.LockfileVersion)
	}
	var out lockFile
	var missing []string
	for path, p := range lock.Packages {
		if path == "" {
			continue // the folder's own package.json
		}
		name := path[strings.LastIndex(path, "node_modules/")+len("node_modules/"):]
		if p.Link || p.Integrity == "" {
			missing = append(missing, name+"@"+p.Version)
			continue
		}
		q := Package{Name: name, Version: p.Version, Integrity: p.Integrity}
		out.tree = append(out.tree, q)
		if path == "node_modules/"+pkg {
			out.top = q
		}
	}
	slices.SortFunc(out.tree, func(a, b Package) int { return strings.Compare(a.Name+"@"+a.Version, b.Name+"@"+b.Version) })
	if len(missing) > 0 {
		slices.Sort(missing)
		return lockFile{}, fmt.Errorf("npm's lock file gives no integrity hash for %s: AIRS installs only a tree whose every package is pinned by its hash", strings.Join(missing, ", "))
	}
	if out.top.Integrity == "" {
		return lockFile{}, fmt.Errorf("npm's lock file has no integrity for %s", pkg)
	}
	if out.top.Version != version {
		return lockFile{}, fmt.Errorf("npm installed %s@%s, not %s", pkg, out.top.Version, version)
	}
	return out, nil
}

// fileHash is the SHA-256 of one file, hex.
func fileHash(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// binOf is the package's one executable (package.json "bin").
func binOf(d, pkg string) (string, error) {
	root := filepath.Join(d, "node_modules", filepath.FromSlash(pkg))
	b, err := os.ReadFile(filepath.Join(root, "package.json"))
	if err != nil {
		return "", err
	}
	var pj struct {
		Bin json.RawMessage `json:"bin"`
	}
	if err := json.Unmarshal(b, &pj); err != nil {
		return "", err
	}
	var one string
	var many map[string]string
	switch {
	case json.Unmarshal(pj.Bin, &one) == nil && one != "":
	case json.Unmarshal(pj.Bin, &many) == nil && len(many) == 1:
		for _, v := range many {
			one = v
		}
	default:
		return "", fmt.Errorf("%s declares no single executable (package.json bin): configure it by hand under mcp.servers", pkg)
	}
	return filepath.Join(root, filepath.FromSlash(one)), nil
}

// treeHash hashes every file and folder under root: its path, mode and
// content (a symlink its target), in path order. The mode counts: a file
// made executable is another program.
func treeHash(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := de.Info()
		if err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case mode&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "L %s %s\n", filepath.ToSlash(rel), t)
		case mode.IsDir():
			fmt.Fprintf(h, "D %s %o\n", filepath.ToSlash(rel), mode.Perm())
		case mode.IsRegular():
			sum, err := fileHash(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "F %s %o %s\n", filepath.ToSlash(rel), mode.Perm(), sum)
		default:
			fmt.Fprintf(h, "? %s %v\n", filepath.ToSlash(rel), mode)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
