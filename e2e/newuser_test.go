//go:build e2e

package e2e

// The first five minutes of a new user, on a real Ollama: a fresh clone, an
// empty home, `make demo`, then README's quick start with a model — airs
// doctor and airs chat before Ollama runs (they say what to do and fail),
// `ollama serve`, the model there, airs doctor and airs chat again (they
// work). scripts/e2e.sh exports the Ollama binary it built
// (AIRS_E2E_OLLAMA_BIN) and the models folder where it created the tiny
// model (AIRS_E2E_OLLAMA_MODELS).

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newUser is a machine with a fresh clone of the repository and an empty
// home. Go's module and build caches are the ones this machine already has
// (a real newcomer downloads and compiles once; that costs minutes and
// proves nothing more here).
type newUser struct {
	t          *testing.T
	repo, home string
	env        []string
}

func newNewUser(t *testing.T) *newUser {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	u := &newUser{t: t, repo: filepath.Join(dir, "airs"), home: filepath.Join(dir, "home")}
	os.MkdirAll(u.home, 0o755)
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	clone := exec.Command("git", "clone", "-q", root, u.repo)
	if out, err := clone.CombinedOutput(); err != nil {
		t.Fatalf("git clone %s: %v\n%s", root, err, out)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	goenv := func(k string) string {
		out, err := exec.Command(goBin, "env", k).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", k, err)
		}
		return strings.TrimSpace(string(out))
	}
	path := strings.Join([]string{filepath.Join(u.repo, "bin"), filepath.Dir(os.Getenv("AIRS_E2E_OLLAMA_BIN")), filepath.Dir(goBin), "/usr/local/bin", "/usr/bin", "/bin"}, ":")
	u.env = []string{"HOME=" + u.home, "PATH=" + path, "LANG=C.UTF-8", "TMPDIR=" + filepath.Join(dir, "tmp"),
		"GOCACHE=" + goenv("GOCACHE"), "GOMODCACHE=" + goenv("GOMODCACHE"), "GOPATH=" + goenv("GOPATH"),
		"GOPROXY=" + goenv("GOPROXY"), "GOFLAGS=" + goenv("GOFLAGS"), "GOTOOLCHAIN=local"}
	return u
}

type result struct {
	out  string // stdout and stderr, as a terminal shows them
	code int
}

// sh runs one shell line in the clone as the new user.
func (u *newUser) sh(ctx context.Context, line, stdin string, extraEnv ...string) result {
	u.t.Helper()
	cmd := exec.CommandContext(ctx, "bash", "-c", line)
	cmd.Dir = u.repo
	cmd.Env = append(append([]string{}, u.env...), extraEnv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		u.t.Fatalf("%s: %v", line, err)
	}
	return result{out.String(), code}
}

// quickStart returns the lines of README's quick start with a model,
// without their comments.
func quickStart(t *testing.T, repo string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(data), "\n## Quick start with a model (Ollama)\n")
	if !ok {
		t.Fatal("README has no quick start with a model")
	}
	_, block, _ := strings.Cut(sec, "```sh\n")
	block, _, _ = strings.Cut(block, "\n```")
	comment := regexp.MustCompile(`\s{2,}#.*$`)
	var lines []string
	for l := range strings.SplitSeq(block, "\n") {
		if l = strings.TrimSpace(comment.ReplaceAllString(l, "")); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestNewUserFirstFiveMinutes(t *testing.T) {
	ollamaBin, models := os.Getenv("AIRS_E2E_OLLAMA_BIN"), os.Getenv("AIRS_E2E_OLLAMA_MODELS")
	if os.Getenv("AIRS_E2E") != "1" || ollamaBin == "" || models == "" {
		t.Skip("e2e: run by scripts/e2e.sh (make e2e), which exports AIRS_E2E_OLLAMA_BIN and AIRS_E2E_OLLAMA_MODELS")
	}
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on this machine", tool)
		}
	}
	_, model := setup(t)
	u := newNewUser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	// 1. make demo, in the clone, with an empty home.
	start := time.Now()
	r := u.sh(ctx, "make demo", "")
	t.Logf("make demo: %s", time.Since(start).Round(time.Millisecond))
	for _, s := range []string{"building ./bin/airs", "built bin/airs in", "chain intact", `"label": "Starter plan"`, "path_escape",
		`$ airs call calculator --args '{"expression":"(12.5 + 7) * 3"}'`} {
		if !strings.Contains(r.out, s) {
			t.Errorf("make demo lacks %q", s)
		}
	}
	if r.code != 0 || t.Failed() {
		t.Fatalf("make demo: exit %d\n%s", r.code, r.out)
	}
	// The demo kept its state in its own folder: the default AIRS_HOME is
	// untouched.
	if _, err := os.Stat(filepath.Join(u.home, ".local", "share", "airs")); err == nil {
		t.Errorf("make demo wrote into the user's AIRS_HOME")
	}

	// 2. README's quick start, with Ollama on a port of its own and the
	// tiny model in place of qwen3:4b.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + l.Addr().String()
	l.Close()
	ollamaEnv := []string{"OLLAMA_HOST=" + host}
	var serve *exec.Cmd
	t.Cleanup(func() {
		if serve != nil && serve.Process != nil {
			syscall.Kill(-serve.Process.Pid, syscall.SIGTERM)
			serve.Wait()
		}
	})
	// The model in the user's airs.yaml too, as README suggests after the
	// quick start: airs doctor alone checks it.
	cfgDir := filepath.Join(u.home, ".config", "airs")
	os.MkdirAll(cfgDir, 0o755)
	if err := os.WriteFile(filepath.Join(cfgDir, "airs.yaml"), []byte("ollama:\n  model: "+model+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := map[string]bool{}
	start = time.Now()
	defer func() { t.Logf("README's quick start: %s", time.Since(start).Round(time.Millisecond)) }()
	for _, line := range quickStart(t, u.repo) {
		line = strings.ReplaceAll(line, "qwen3:4b", model)
		switch {
		case strings.Contains(line, "install.sh"):
			// Ollama is installed: scripts/e2e.sh built it from its Go
			// module, and it is on the new user's PATH.
			steps["install"] = true
			if r := u.sh(ctx, "command -v ollama", ""); r.code != 0 {
				t.Fatalf("ollama is not on PATH: %s", r.out)
			}
		case line == "ollama serve &":
			// Before Ollama runs: doctor fails naming the model, chat
			// refuses with how to start Ollama.
			for _, doctor := range []string{"airs doctor --model " + model, "airs doctor"} { // the flag, then airs.yaml's model
				before := u.sh(ctx, doctor, "", ollamaEnv...)
				if before.code == 0 || !strings.Contains(before.out, "FAIL  ollama") || !strings.Contains(before.out, "ollama serve") ||
					!strings.Contains(before.out, "the model "+model+" is configured") {
					t.Errorf("%s before Ollama runs: exit %d\n%s", doctor, before.code, before.out)
				}
			}
			chat := u.sh(ctx, "airs chat --model "+model, "", ollamaEnv...)
			if chat.code != 5 || !strings.Contains(chat.out, "ollama serve") || !strings.Contains(chat.out, "ollama pull "+model) {
				t.Errorf("airs chat before Ollama runs: exit %d\n%s", chat.code, chat.out)
			}
			steps["serve"] = true
			serve = exec.Command(ollamaBin, "serve")
			serve.Env = append(append([]string{}, u.env...), append(ollamaEnv, "OLLAMA_MODELS="+models, "OLLAMA_NUM_PARALLEL=1",
				"OLLAMA_MAX_LOADED_MODELS=1", "OLLAMA_CONTEXT_LENGTH=2048", "OLLAMA_NOHISTORY=1")...)
			serve.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its runners stop with it
			var log bytes.Buffer
			serve.Stdout, serve.Stderr = &log, &log
			if err := serve.Start(); err != nil {
				t.Fatal(err)
			}
			waitServing(t, ctx, host)
		case strings.HasPrefix(line, "ollama pull "):
			// No registry here: the model was created in the models folder
			// from the generated GGUF; what the user checks after a pull
			// is that ollama lists it.
			steps["pull"] = true
			if r := u.sh(ctx, "ollama list", "", ollamaEnv...); r.code != 0 || !strings.Contains(r.out, model) {
				t.Fatalf("ollama list: exit %d\n%s", r.code, r.out)
			}
		case strings.HasPrefix(line, "airs doctor"):
			steps["doctor"] = true
			for _, doctor := range []string{line, "airs doctor"} {
				after := u.sh(ctx, doctor, "", ollamaEnv...)
				if after.code != 0 || !strings.Contains(after.out, model+" is pulled") || !strings.Contains(after.out, "What is configured works") {
					t.Errorf("%s after Ollama started: exit %d\n%s", doctor, after.code, after.out)
				}
			}
		case strings.HasPrefix(line, "airs chat"):
			steps["chat"] = true
			chat := u.sh(ctx, line, "what is 17 * 23 + 4\n/why\n/quit\n", ollamaEnv...)
			if chat.code != 0 || !strings.Contains(chat.out, "mode: model "+model) || !strings.Contains(chat.out, "candidates for the last request") {
				t.Errorf("%s: exit %d\n%s", line, chat.code, chat.out)
			}
		default:
			t.Errorf("README quick start line %q: this test does not know it", line)
		}
	}
	for _, s := range []string{"install", "serve", "pull", "doctor", "chat"} {
		if !steps[s] {
			t.Errorf("README's quick start has no %s step", s)
		}
	}
}

// waitServing waits until Ollama answers at host.
func waitServing(t *testing.T, ctx context.Context, host string) {
	t.Helper()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := http.Get(host + "/api/version"); err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ollama serve did not answer at %s", host)
		case <-tick.C:
		}
	}
}
