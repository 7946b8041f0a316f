// Package modelcheck tells whether the Ollama model a command was asked to
// use is there, and if not, what to do about it: install and start Ollama,
// or pull the model. Commands that take --model call Require before they
// start; `airs doctor` calls Probe to explain the server's state.
//
// Only an unset model ("") falls back to the no-LLM mode. A model that was
// named — by --model or by ollama.model in airs.yaml — and cannot be used
// is an error: silently answering without it would hide the reason the
// answers are poorer.
package modelcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airs-dev/airs/internal/ollama"
)

// DefaultTimeout bounds a probe when the caller's context has no deadline:
// a local server answers in milliseconds, and a command should not wait
// long for one that is not there.
const DefaultTimeout = 3 * time.Second

// Status is what an Ollama server said about itself.
type Status struct {
	// Host is the server's base URL (ollama.host, else OLLAMA_HOST, else
	// the default).
	Host string
	// Err is why the server could not be reached; nil when it answered.
	Err error
	// Version is the server's version, Models the names it has pulled
	// (as `ollama list` shows them).
	Version string
	Models  []string
}

// Reachable reports whether the server answered.
func (s Status) Reachable() bool { return s.Err == nil }

// Has reports whether the server holds the model name ("qwen3" is
// "qwen3:latest", as Ollama names it).
func (s Status) Has(name string) bool {
	want := Canonical(name)
	return slices.ContainsFunc(s.Models, func(m string) bool { return Canonical(m) == want })
}

// Canonical is a model name with Ollama's default tag and without its
// default registry and namespace, so that names written either way compare
// equal.
func Canonical(name string) string {
	n := strings.TrimSpace(name)
	n = strings.TrimPrefix(n, "registry.ollama.ai/")
	n = strings.TrimPrefix(n, "library/")
	if i := strings.LastIndex(n, ":"); i < 0 || strings.Contains(n[i:], "/") {
		n += ":latest"
	}
	return n
}

// Probe asks the server at host ("" for OLLAMA_HOST or the default) for its
// version and its models.
func Probe(ctx context.Context, host string) Status {
	c, err := ollama.New(ollama.Config{Host: host})
	if err != nil {
		return Status{Host: host, Err: err}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	s := Status{Host: c.Host()}
	if s.Version, s.Err = c.Version(ctx); s.Err != nil {
		return s
	}
	s.Models, s.Err = c.Models(ctx)
	return s
}

// Require returns nil when model is unset (""), "none", or pulled into a
// reachable server at host; otherwise an *UnavailableError that says how
// to get it.
func Require(ctx context.Context, host, model string) error {
	if model == "" || model == "none" {
		return nil
	}
	s := Probe(ctx, host)
	if s.Reachable() && s.Has(model) {
		return nil
	}
	return &UnavailableError{Model: model, Status: s}
}

// UnavailableError is a model that was asked for and cannot be used: the
// server is not reachable, or it has not pulled the model.
type UnavailableError struct {
	Model  string
	Status Status
}

// InstallURL is where Ollama's installers are.
const InstallURL = "https://ollama.com/download"

func (e *UnavailableError) Error() string {
	s := e.Status
	var b strings.Builder
	if !s.Reachable() {
		fmt.Fprintf(&b, "the model %s was asked for, but Ollama at %s is not reachable (%v).\n", e.Model, s.Host, s.Err)
		fmt.Fprintf(&b, "  install Ollama:  %s (Linux: curl -fsSL https://ollama.com/install.sh | sh)\n", InstallURL)
		b.WriteString("  start it:        ollama serve   (or the Ollama app; another host: ollama.host in airs.yaml or OLLAMA_HOST)\n")
		fmt.Fprintf(&b, "  get the model:   ollama pull %s\n", e.Model)
	} else {
		have := "no models yet"
		if len(s.Models) > 0 {
			have = "it has " + strings.Join(s.Models, ", ")
		}
		fmt.Fprintf(&b, "Ollama at %s has no model %s (%s).\n", s.Host, e.Model, have)
		fmt.Fprintf(&b, "  get it:  ollama pull %s\n", e.Model)
	}
	b.WriteString("or run without a model (no-LLM mode): --model none. 'airs doctor' checks the whole setup")
	return b.String()
}
