package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTemporalRunAndWorker: with chains.engine temporal, `airs run` starts
// the pipeline as a workflow and an `airs worker` process runs its calls
// through its own pipeline. Needs a Temporal server: `make e2e-temporal`
// (scripts/temporal.sh sets AIRS_TEMPORAL_ADDRESS).
func TestTemporalRunAndWorker(t *testing.T) {
	addr := os.Getenv("AIRS_TEMPORAL_ADDRESS")
	if addr == "" {
		t.Skip("AIRS_TEMPORAL_ADDRESS not set: run `make e2e-temporal`")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "airs")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(docs, f), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	queue := "airs-cli-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	cfg := "home: " + filepath.Join(dir, "home") + "\nspaces: {documents: " + docs + "}\n" +
		"chains: {engine: temporal, address: '" + addr + "', task_queue: " + queue + "}\n"
	if err := os.WriteFile(filepath.Join(dir, "airs.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	pipe := "pipeline: t\nsteps:\n  - id: list\n    tool: list-files\n    params: {space: documents, dir: \".\", pattern: \"*.txt\"}\noutput: \"{{steps.list.output.files[*].path}}\"\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(pipe), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "AIRS_CONFIG="+filepath.Join(dir, "airs.yaml"), "AIRS_HOME=")
	var wlog syncBuffer
	w := exec.Command(bin, "worker")
	w.Env, w.Dir, w.Stderr = env, dir, &wlog
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Process.Kill(); _ = w.Wait() }()
	// airs run refuses a queue no worker polls (after a short wait): let
	// this one start first.
	for start := time.Now(); !strings.Contains(wlog.String(), "polling task queue"); {
		if time.Since(start) > 90*time.Second {
			t.Fatalf("the worker did not start:\n%s", wlog.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := exec.CommandContext(ctx, bin, "run", "p.yaml", "--json")
	r.Env, r.Dir = env, dir
	var stderr bytes.Buffer
	r.Stderr = &stderr
	out, err := r.Output()
	if err != nil {
		t.Fatalf("airs run: %v\nstderr: %s\nworker: %s", err, stderr.String(), wlog.String())
	}
	if !strings.Contains(stderr.String(), "on Temporal") {
		t.Errorf("airs run did not say it ran on Temporal: %s", stderr.String())
	}
	var res struct {
		Output []string `json:"output"`
		Steps  map[string]struct {
			Status string `json:"status"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	slices.Sort(res.Output)
	if !slices.Equal(res.Output, []string{"a.txt", "b.txt"}) || res.Steps["list"].Status != "ok" {
		t.Errorf("result: %s", out)
	}
}
