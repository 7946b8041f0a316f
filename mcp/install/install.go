// Package install puts MCP servers from npm into AIRS_HOME: an exact
// version, installed with npm's own client and no install scripts, its
// registry integrity hash and a hash of the installed files recorded, and
// both checked each time AIRS starts it. An installed server is offered
// only once the user approved it (Approve), after reviewing its tools.
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
	Tree      string   `json:"tree_sha256"` // of every file under node_modules, at install
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

// Install runs `npm install --ignore-scripts` of pkg@version into the
// server's folder and records it (not approved). npm is the npm client on
// $PATH unless npmBin says otherwise.
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
	cmd := exec.CommandContext(ctx, npmBin, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--save-exact", "--prefix", d, pkg+"@"+version)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		os.RemoveAll(d)
		return Server{}, fmt.Errorf("npm install %s@%s: %v (its output is above)", pkg, version, err)
	}
	s.Approved = false
	if s.Integrity, err = lockIntegrity(d, pkg, version); err != nil {
		os.RemoveAll(d)
		return Server{}, err
	}
	bin, err := binOf(d, pkg)
	if err != nil {
		os.RemoveAll(d)
		return Server{}, err
	}
	s.Command = []string{"node", bin}
	if s.Tree, err = treeHash(filepath.Join(d, "node_modules")); err != nil {
		os.RemoveAll(d)
		return Server{}, err
	}
	if err := save(home, append(list, s)); err != nil {
		return Server{}, err
	}
	return s, nil
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
// lock's integrity hash and the hash of every file under node_modules.
func Verify(home string, s Server) error {
	d := serverDir(home, s.Name)
	integ, err := lockIntegrity(d, s.Package, s.Version)
	if err != nil {
		return err
	}
	if integ != s.Integrity {
		return fmt.Errorf("installed MCP server %s: %s@%s's integrity is %s, not the %s recorded at install: reinstall it (`airs tools remove %s`, then install)", s.Name, s.Package, s.Version, integ, s.Integrity, s.Name)
	}
	tree, err := treeHash(filepath.Join(d, "node_modules"))
	if err != nil {
		return err
	}
	if tree != s.Tree {
		return fmt.Errorf("installed MCP server %s: its files changed since it was installed (hash %s, recorded %s): reinstall it (`airs tools remove %s`, then install)", s.Name, tree[:12], s.Tree[:12], s.Name)
	}
	return nil
}

// lockIntegrity is the registry's integrity hash of pkg as npm locked it.
func lockIntegrity(d, pkg, version string) (string, error) {
	b, err := os.ReadFile(filepath.Join(d, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("reading npm's lock file: %w", err)
	}
	var lock struct {
		Packages map[string]struct {
			Version   string `json:"version"`
			Integrity string `json:"integrity"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return "", fmt.Errorf("reading npm's lock file: %w", err)
	}
	p, ok := lock.Packages["node_modules/"+pkg]
	if !ok || p.Integrity == "" {
		return "", fmt.Errorf("npm's lock file has no integrity for %s", pkg)
	}
	if p.Version != version {
		return "", fmt.Errorf("npm installed %s@%s, not %s", pkg, p.Version, version)
	}
	return p.Integrity, nil
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

// treeHash hashes every regular file under root (path and content, in
// path order); symlinks by their target.
func treeHash(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		switch {
		case de.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "L %s %s\n", filepath.ToSlash(rel), t)
		case de.Type().IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			fh := sha256.New()
			_, err = io.Copy(fh, f)
			f.Close()
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "F %s %x\n", filepath.ToSlash(rel), fh.Sum(nil))
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
