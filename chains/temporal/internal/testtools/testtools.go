// Package testtools is a small pipeline with slow, counting tools for the
// Temporal tests: each call appends a line to <dir>/<name>.start before it
// sleeps and to <dir>/<name>.done after, so a test can tell how often each
// step ran and whether it finished.
package testtools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airs-dev/airs/chains"
	"github.com/airs-dev/airs/pipeline"
)

// Provider is the provider id the tools are registered under.
const Provider = "testtools"

// Caller may call every tool.
const Caller = "tester"

const slowParams = `{"type":"object","properties":{"name":{"type":"string"},"ms":{"type":"integer","minimum":0}},"required":["name"],"additionalProperties":false}`
const slowReturn = `{"type":"object","properties":{"name":{"type":"string"},"runs":{"type":"integer"}},"required":["name","runs"]}`

// New returns a Manager serving:
//
//	slow_step  {name, ms}: idempotent; counts, sleeps ms, returns {name, runs}
//	slow_write {name, ms}: the same, not idempotent
//	split      {n}:        idempotent; returns ["p0", …, "p(n-1)"]
//	fail       {}:         always fails
func New(dir string) (*pipeline.Manager, chains.Catalog, error) {
	policy := &pipeline.StaticPolicy{Channels: map[string][]string{"*": {Provider}}}
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	slow := func(ctx context.Context, params json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
		var p struct {
			Name string `json:"name"`
			Ms   int    `json:"ms"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		runs, err := appendLine(filepath.Join(dir, p.Name+".start"))
		if err != nil {
			return nil, err
		}
		select {
		case <-time.After(time.Duration(p.Ms) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if _, err := appendLine(filepath.Join(dir, p.Name+".done")); err != nil {
			return nil, err
		}
		return json.Marshal(map[string]any{"name": p.Name, "runs": runs})
	}
	tools := []struct {
		t pipeline.Tool
		h pipeline.HandlerFunc
	}{
		{pipeline.Tool{Name: "slow_step", Version: "1.0.0", Description: "sleeps, counting its runs", Parameters: json.RawMessage(slowParams),
			ReturnSchema: json.RawMessage(slowReturn), LatencyClass: pipeline.Slow, Idempotent: true, ReadOnly: true}, slow},
		{pipeline.Tool{Name: "slow_write", Version: "1.0.0", Description: "sleeps, counting its runs; not idempotent", Parameters: json.RawMessage(slowParams),
			ReturnSchema: json.RawMessage(slowReturn), LatencyClass: pipeline.Slow}, slow},
		{pipeline.Tool{Name: "split", Version: "1.0.0", Description: "n item names",
			Parameters:   json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":0}},"required":["n"]}`),
			ReturnSchema: json.RawMessage(`{"type":"array","items":{"type":"string"}}`), LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true},
			func(_ context.Context, params json.RawMessage, _ *pipeline.Call) (json.RawMessage, error) {
				var p struct{ N int }
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				out := make([]string, p.N)
				for i := range out {
					out[i] = fmt.Sprintf("p%d", i)
				}
				return json.Marshal(out)
			}},
		{pipeline.Tool{Name: "fail", Version: "1.0.0", Description: "always fails", Parameters: json.RawMessage(`{"type":"object"}`),
			LatencyClass: pipeline.Fast, Idempotent: true, ReadOnly: true},
			func(context.Context, json.RawMessage, *pipeline.Call) (json.RawMessage, error) {
				return nil, errors.New("fail: as asked")
			}},
	}
	for _, t := range tools {
		if err := reg.Register(Provider, t.t, t.h); err != nil {
			return nil, nil, err
		}
	}
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg, Policy: policy})
	if err != nil {
		return nil, nil, err
	}
	return m, chains.RegistryCatalog{Registry: reg, Policy: policy}, nil
}

// appendLine appends one line and returns how many lines the file has.
// O_APPEND writes of one short line do not interleave, even across
// processes.
func appendLine(path string) (int, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	if _, err := fmt.Fprintf(f, "%d %s\n", os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
		f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return Count(path)
}

// Count returns the number of lines in path (0 when it does not exist).
func Count(path string) (int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strings.Count(string(b), "\n"), nil
}
