package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeOllama is an Ollama server that answers its version and the models
// it has pulled, enough for airs doctor and the model checks.
func fakeOllama(t *testing.T, models ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/version":
			w.Write([]byte(`{"version":"0.17.4"}`))
		case "/api/tags":
			var parts []string
			for _, m := range models {
				parts = append(parts, `{"name":"`+m+`","model":"`+m+`"}`)
			}
			w.Write([]byte(`{"models":[` + strings.Join(parts, ",") + `]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// deadOllama is an address where nothing listens.
func deadOllama(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "http://" + l.Addr().String()
}

type doctorJSON struct {
	OK     bool `json:"ok"`
	Checks []struct {
		Name, Status, Detail, Fix string
	} `json:"checks"`
}

func (d doctorJSON) status(name string) string {
	for _, c := range d.Checks {
		if c.Name == name {
			return c.Status
		}
	}
	return ""
}

func runDoctorJSON(t *testing.T, e *env, args ...string) (doctorJSON, runResult) {
	t.Helper()
	r := e.run(append([]string{"doctor", "--json"}, args...)...)
	var d doctorJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("doctor --json: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return d, r
}

// airs doctor: exit 0 exactly when what is configured works; a configured
// model that is not there, before and after Ollama runs and has it.
func TestDoctorModel(t *testing.T) {
	dead := deadOllama(t)
	e := newEnv(t, "ollama:\n  host: "+dead+"\n  model: qwen3:4b\n")
	d, r := runDoctorJSON(t, e)
	if r.code != 1 || d.OK || d.status("ollama") != "fail" || d.status("config") != "ok" || d.status("space documents") != "ok" {
		t.Errorf("no Ollama, a model configured: exit %d %+v", r.code, d)
	}
	// The text form: the failing line and each step of its fix.
	r = e.run("doctor")
	for _, s := range []string{"FAIL  ollama", "not reachable at " + dead, "ollama serve", "ollama pull qwen3:4b", "https://ollama.com/download", "1 problem(s)"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("doctor lacks %q:\n%s", s, r.stdout)
		}
	}

	// Ollama runs but has not pulled it.
	e = newEnv(t, "ollama:\n  host: "+fakeOllama(t, "llama3.2:latest")+"\n  model: qwen3:4b\n")
	d, r = runDoctorJSON(t, e)
	if r.code != 1 || d.status("ollama") != "ok" || d.status("model") != "fail" || !strings.Contains(r.stdout, "ollama pull qwen3:4b") {
		t.Errorf("not pulled: exit %d\n%s", r.code, r.stdout)
	}
	// --model checks another one.
	if d, r = runDoctorJSON(t, e, "--model", "llama3.2"); r.code != 0 || d.status("model") != "ok" {
		t.Errorf("--model llama3.2 (pulled): exit %d\n%s", r.code, r.stdout)
	}

	// Ollama has it: exit 0, its version and models said.
	e = newEnv(t, "ollama:\n  host: "+fakeOllama(t, "qwen3:4b")+"\n  model: qwen3:4b\n")
	r = e.run("doctor")
	r.expect(t, 0, "What is configured works", "")
	if !strings.Contains(r.stdout, "Ollama 0.17.4 at") || !strings.Contains(r.stdout, "qwen3:4b is pulled") {
		t.Errorf("doctor with the model there:\n%s", r.stdout)
	}

	// No model configured: no Ollama is only a note.
	e = newEnv(t, "ollama:\n  host: "+dead+"\n")
	d, r = runDoctorJSON(t, e)
	if r.code != 0 || d.status("ollama") != "note" {
		t.Errorf("no model, no Ollama: exit %d\n%s", r.code, r.stdout)
	}
}

// Spaces, the configuration file, the in-process engine and the data
// folder: each problem is a line with its fix.
func TestDoctorSetup(t *testing.T) {
	dead := deadOllama(t)
	e := newEnv(t, "ollama:\n  host: "+dead+"\n")
	// A space whose folder went away after the file was written: the
	// file's check names it (the loader validates spaces).
	os.RemoveAll(filepath.Join(e.dir, "private"))
	d, r := runDoctorJSON(t, e)
	if r.code != 1 || d.status("config") != "fail" || !strings.Contains(r.stdout, "space private: directory "+filepath.Join(e.dir, "private")+" does not exist") ||
		!strings.Contains(r.stdout, "the other checks use the defaults") {
		t.Errorf("a missing space folder: exit %d\n%s", r.code, r.stdout)
	}
	// ~/Documents missing (HOME is e.dir, which has none) is said as a
	// note, with how to create it.
	if d.status("space documents") != "note" || !strings.Contains(r.stdout, "mkdir -p "+filepath.Join(e.dir, "Documents")) {
		t.Errorf("~/Documents missing: %+v", d)
	}
	// A space that exists but cannot be read.
	if os.Getuid() != 0 {
		e = newEnv(t, "ollama:\n  host: "+dead+"\n")
		os.Chmod(filepath.Join(e.dir, "private"), 0o000)
		t.Cleanup(func() { os.Chmod(filepath.Join(e.dir, "private"), 0o755) })
		if d, r := runDoctorJSON(t, e); r.code != 1 || d.status("space private") != "fail" || d.status("space documents") != "ok" {
			t.Errorf("an unreadable space: exit %d\n%s", r.code, r.stdout)
		}
	}

	// model.engine inproc in a binary without it: said, with how to build it.
	e = newEnv(t, "ollama:\n  host: "+dead+"\nmodel:\n  engine: inproc\n  gguf: /nonexistent.gguf\n")
	d, r = runDoctorJSON(t, e)
	if d.status("inproc") != "fail" || r.code != 1 {
		t.Errorf("inproc configured: exit %d\n%s", r.code, r.stdout)
	}

	// DATA_DIR naming an empty folder fails the data check; with the
	// data sets there it passes.
	e = newEnv(t, "ollama:\n  host: "+dead+"\n")
	t.Setenv("DATA_DIR", t.TempDir())
	if d, _ := runDoctorJSON(t, e); d.status("data") != "fail" {
		t.Errorf("an empty DATA_DIR: %+v", d)
	}
	full := t.TempDir()
	for _, s := range dataSets {
		os.MkdirAll(filepath.Join(full, s), 0o755)
	}
	t.Setenv("DATA_DIR", full)
	if d, r := runDoctorJSON(t, e); d.status("data") != "ok" || r.code != 0 {
		t.Errorf("a full DATA_DIR: exit %d %+v", r.code, d)
	}

	// PostgreSQL and Temporal, configured and not there: one failure each,
	// with its fix; the file storage is not checked then.
	e = newEnv(t, "ollama:\n  host: "+dead+"\nchains: {engine: temporal, address: "+strings.TrimPrefix(dead, "http://")+"}\nstorage: {audit: postgres, dsn: \"postgres://u@"+strings.TrimPrefix(dead, "http://")+"/db\"}\n")
	d, r = runDoctorJSON(t, e)
	if r.code != 1 || d.status("postgres") != "fail" || d.status("temporal") != "fail" || d.status("storage") != "" {
		t.Errorf("postgres and temporal down: exit %d\n%s", r.code, r.stdout)
	}
	if r := e.run("doctor"); !strings.Contains(r.stdout, "FAIL  postgres") || !strings.Contains(r.stdout, "scripts/pg.sh") || !strings.Contains(r.stdout, "temporal server start-dev") {
		t.Errorf("the text form:\n%s", r.stdout)
	}

	// An invalid file, and one that does not exist: a failure each,
	// not a crash, and the rest is still checked.
	bad := newEnv(t, "breaker:\n  failures: lots\n")
	if d, r := runDoctorJSON(t, bad); r.code != 1 || d.status("config") != "fail" || d.status("home") == "" || !strings.Contains(r.stdout, "airs.yaml:") {
		t.Errorf("an invalid file: exit %d\n%s", r.code, r.stdout)
	}
	gone := newEnv(t, "")
	gone.config = filepath.Join(gone.dir, "nope.yaml")
	if d, r := runDoctorJSON(t, gone); r.code != 1 || d.status("config") != "fail" || !strings.Contains(r.stdout, "does not exist") {
		t.Errorf("a missing file: exit %d\n%s", r.code, r.stdout)
	}
}

// A model asked for and not there is an error of its own (exit 5) that
// says how to get it, for every command that takes --model; only an unset
// model falls back to the no-LLM mode.
func TestModelAskedForIsRequired(t *testing.T) {
	dead := deadOllama(t)
	e := newEnv(t, "ollama:\n  host: "+dead+"\n")
	for _, args := range [][]string{
		{"chat", "--model", "qwen3:4b"},
		{"select", "--model", "qwen3:4b", "read hello.txt"},
		{"plan", "--model", "qwen3:4b", "read hello.txt"},
	} {
		r := e.run(args...)
		r.expect(t, 5, "", "the model qwen3:4b was asked for, but Ollama at "+dead+" is not reachable")
		for _, s := range []string{"https://ollama.com/download", "ollama serve", "ollama pull qwen3:4b", "--model none"} {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("airs %q lacks %q:\n%s", args, s, r.stderr)
			}
		}
	}
	// The evals too, before their questions (OLLAMA_HOST: bfcl's model
	// server).
	t.Setenv("OLLAMA_HOST", dead)
	e.run("eval", "bfcl", "--model", "ollama:qwen3:4b", "--data", filepath.Join(repoRoot(t), "evals", "bfcl", "testdata"), "--categories", "multiple").
		expect(t, 5, "", "ollama pull qwen3:4b")
	// serve too, before it listens.
	e.run("serve", "--listen", "127.0.0.1:0", "--model", "qwen3:4b").expect(t, 5, "", "ollama pull qwen3:4b")

	// Reachable, not pulled.
	up := newEnv(t, "ollama:\n  host: "+fakeOllama(t, "llama3.2:latest")+"\n")
	r := up.runStdin("", "chat", "--model", "qwen3:4b")
	r.expect(t, 5, "", "has no model qwen3:4b (it has llama3.2:latest)")
	if !strings.Contains(r.stderr, "ollama pull qwen3:4b") || strings.Contains(r.stderr, "ollama serve") {
		t.Errorf("not pulled:\n%s", r.stderr)
	}
	// The configured model is asked for as much as --model.
	cfgModel := newEnv(t, "ollama:\n  host: "+dead+"\n  model: qwen3:4b\n")
	cfgModel.runStdin("", "chat").expect(t, 5, "", "ollama pull qwen3:4b")
	// Unset, or none: the no-LLM mode, with its one-line notice.
	e.runStdin("", "chat").expect(t, 0, "no-LLM", "")
	cfgModel.runStdin("", "chat", "--model", "none").expect(t, 0, "no-LLM", "")
	// The exit code is listed.
	e.run("help", "exit-codes").expect(t, 0, "5     model not available", "")
}
