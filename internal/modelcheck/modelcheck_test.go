package modelcheck

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeOllama answers /api/version and /api/tags as Ollama does.
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

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestRequire(t *testing.T) {
	ctx := context.Background()
	host := fakeOllama(t, "qwen3:4b", "llama3.2:latest")
	for _, m := range []string{"", "none", "qwen3:4b", "llama3.2", "library/llama3.2:latest"} {
		if err := Require(ctx, host, m); err != nil {
			t.Errorf("Require(%q): %v", m, err)
		}
	}
	// Reachable, not pulled: says ollama pull NAME and what the server has.
	err := Require(ctx, host, "qwen3:0.6b")
	var ue *UnavailableError
	if !errors.As(err, &ue) || !ue.Status.Reachable() {
		t.Fatalf("a model not pulled: %v", err)
	}
	for _, s := range []string{"has no model qwen3:0.6b", "ollama pull qwen3:0.6b", "qwen3:4b, llama3.2:latest", "--model none"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("not pulled: message lacks %q:\n%v", s, err)
		}
	}
	if strings.Contains(err.Error(), "ollama serve") {
		t.Errorf("a running server is told to start:\n%v", err)
	}
	// Not reachable: install, start, pull.
	down := closedPort(t)
	err = Require(ctx, down, "qwen3:4b")
	if !errors.As(err, &ue) || ue.Status.Reachable() {
		t.Fatalf("no server: %v", err)
	}
	for _, s := range []string{"is not reachable", InstallURL, "ollama serve", "ollama pull qwen3:4b", "--model none"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("no server: message lacks %q:\n%v", s, err)
		}
	}
	// An unset model never probes: no error even with no server.
	if err := Require(ctx, down, ""); err != nil {
		t.Errorf("unset model: %v", err)
	}
}

func TestProbe(t *testing.T) {
	s := Probe(context.Background(), fakeOllama(t, "a:1"))
	if !s.Reachable() || s.Version != "0.17.4" || len(s.Models) != 1 || !s.Has("a:1") || s.Has("a") {
		t.Errorf("probe: %+v", s)
	}
	if s := Probe(context.Background(), closedPort(t)); s.Reachable() {
		t.Errorf("a closed port answered: %+v", s)
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"qwen3": "qwen3:latest", "qwen3:4b": "qwen3:4b", "library/qwen3": "qwen3:latest",
		"registry.ollama.ai/library/qwen3:4b": "qwen3:4b", "host:5000/ns/m": "host:5000/ns/m:latest", "ns/m:t": "ns/m:t",
	} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}
