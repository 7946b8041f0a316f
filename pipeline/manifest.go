package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// A manifest declares tools in a file instead of code, so `airs` can load
// them at start. A manifest cannot carry code, so each tool names a handler
// id ("builtin.calculator", "mcp.github.search", ...) and the program that
// loads the manifest supplies a HandlerResolver mapping ids to handlers. An
// id the resolver does not know fails the load: a declared tool that cannot
// run is a configuration error, found at start.
//
// Format (YAML; JSON with the same fields when the file ends in .json):
//
//	provider: local                 # agent id that provides these tools
//	tools:
//	  - name: calculator
//	    version: 1.0.0
//	    description: Evaluates arithmetic expressions.
//	    handler: builtin.calculator # resolved by the HandlerResolver
//	    parameters:                 # JSON Schema 2020-12, inline
//	      type: object
//	      properties: {expr: {type: string}}
//	      required: [expr]
//	    return_schema: {type: object}          # optional
//	    capability_required: ["ReadSpace(documents)"]
//	    trust: TL3                  # TL0..TL3, or community|verified|organisation|system, or 0..3
//	    latency_class: instant      # instant|fast|slow|long_running, or 0..3
//	    idempotent: true
//	    lenient: false
//	    deprecation: {sunset: 2027-01-01, replacement: calculator2}
//	    migrations:                 # calls pinned to an old major (migrate.go)
//	      - {from: "1", tool: calculator-v1-to-v2, version: 1.0.0}
//
// A migration tool is declared like any tool (its parameters are the old
// format, its output the new); the manifest may list it before or after the
// version that uses it.
type Manifest struct {
	Path     string
	Provider string
	Tools    []ManifestTool
}

// ManifestTool is one declared tool and the id of its handler.
type ManifestTool struct {
	Tool    Tool
	Handler string
}

// HandlerResolver maps a manifest's handler id to a Handler.
type HandlerResolver func(id string) (Handler, error)

// HandlerMap is the simplest resolver: a fixed table.
type HandlerMap map[string]Handler

// Resolve implements HandlerResolver for a HandlerMap.
func (m HandlerMap) Resolve(id string) (Handler, error) {
	if h, ok := m[id]; ok {
		return h, nil
	}
	return nil, fmt.Errorf("unknown handler %q", id)
}

// manifestFile is the on-disk shape; flexible fields are decoded by hand.
type manifestFile struct {
	Provider string `json:"provider"`
	Tools    []struct {
		Name         string          `json:"name"`
		Version      string          `json:"version"`
		Description  string          `json:"description"`
		Handler      string          `json:"handler"`
		Parameters   json.RawMessage `json:"parameters"`
		ReturnSchema json.RawMessage `json:"return_schema"`
		Capabilities []Capability    `json:"capability_required"`
		Trust        json.RawMessage `json:"trust"`
		LatencyClass json.RawMessage `json:"latency_class"`
		Idempotent   bool            `json:"idempotent"`
		ReadOnly     bool            `json:"read_only"`
		Destructive  bool            `json:"destructive"`
		Lenient      bool            `json:"lenient"`
		Deprecation  *struct {
			Sunset      string `json:"sunset"`
			Replacement string `json:"replacement"`
		} `json:"deprecation"`
		Migrations []Migration `json:"migrations"`
	} `json:"tools"`
}

// LoadManifest reads and checks a manifest file (YAML, or JSON for *.json).
// It does not register anything: call Manifest.Register.
func LoadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ParseManifest(b, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	m.Path = path
	return m, nil
}

// ParseManifest parses manifest bytes. Both formats go through one generic
// value and its JSON form, so YAML and JSON manifests mean exactly the same.
func ParseManifest(b []byte, isJSON bool) (*Manifest, error) {
	var js []byte
	if isJSON {
		js = b
	} else {
		var doc any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
		var err error
		if js, err = json.Marshal(yamlToJSONValue(doc)); err != nil {
			return nil, err
		}
	}
	var f manifestFile
	d := json.NewDecoder(bytes.NewReader(js))
	d.DisallowUnknownFields() // a misspelt field must not silently drop a guard
	if err := d.Decode(&f); err != nil {
		return nil, err
	}
	if f.Provider == "" {
		return nil, errors.New("no provider")
	}
	m := &Manifest{Provider: f.Provider}
	for i, t := range f.Tools {
		where := fmt.Sprintf("tools[%d] (%s)", i, t.Name)
		if t.Handler == "" {
			return nil, fmt.Errorf("%s: no handler id", where)
		}
		trust, err := parseTrust(t.Trust)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		lc, err := parseLatencyClass(t.LatencyClass)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		tool := Tool{
			Name: t.Name, Version: t.Version, Description: t.Description,
			Parameters: t.Parameters, ReturnSchema: t.ReturnSchema,
			CapabilityRequired: t.Capabilities, Trust: trust, LatencyClass: lc,
			Idempotent: t.Idempotent, ReadOnly: t.ReadOnly, Destructive: t.Destructive,
			Lenient: t.Lenient, Migrations: t.Migrations,
		}
		if tool.ReadOnly && tool.Destructive {
			return nil, fmt.Errorf("%s: read_only and destructive are both true: a tool that changes nothing destroys nothing; keep one", where)
		}
		for j, mg := range tool.Migrations {
			if mg.From == "" || mg.Tool == "" {
				return nil, fmt.Errorf("%s: migrations[%d]: want both from and tool", where, j)
			}
		}
		if string(tool.ReturnSchema) == "null" {
			tool.ReturnSchema = nil
		}
		if dep := t.Deprecation; dep != nil {
			sunset, err := parseSunset(dep.Sunset)
			if err != nil {
				return nil, fmt.Errorf("%s: deprecation: %w", where, err)
			}
			tool.Deprecation = &Deprecation{Sunset: sunset, Replacement: dep.Replacement}
		}
		m.Tools = append(m.Tools, ManifestTool{Tool: tool, Handler: t.Handler})
	}
	return m, nil
}

// Register binds every tool's handler through resolve and registers it
// under the manifest's provider. It registers nothing if any id is unknown
// or any migration names a tool that neither the manifest nor the registry
// has for this provider. Tools that declare migrations are registered after
// the others, so that their migration tools are there first.
func (m *Manifest) Register(r *Registry, resolve HandlerResolver) error {
	hs := make([]Handler, len(m.Tools))
	declared := map[string][]*entry{} // name → versions in the manifest, for Registry.pick
	for i, t := range m.Tools {
		h, err := resolve(t.Handler)
		if err != nil {
			return fmt.Errorf("manifest %s: tool %s: %w", m.Path, t.Tool.Name, err)
		}
		hs[i] = h
		declared[t.Tool.Name] = append(declared[t.Tool.Name], &entry{tool: t.Tool})
	}
	for _, t := range m.Tools {
		for _, mg := range t.Tool.Migrations {
			if _, ok := r.Get(m.Provider, mg.Tool, mg.Version); !ok && r.pick(declared[mg.Tool], mg.Version) == nil {
				return fmt.Errorf("manifest %s: tool %s: migration from %q names tool %s, which is neither in the manifest nor registered by %s",
					m.Path, t.Tool.Name, mg.From, mg, m.Provider)
			}
		}
	}
	for _, withMigrations := range []bool{false, true} {
		for i, t := range m.Tools {
			if (len(t.Tool.Migrations) > 0) != withMigrations {
				continue
			}
			if err := r.Register(m.Provider, t.Tool, hs[i]); err != nil {
				return fmt.Errorf("manifest %s: %w", m.Path, err)
			}
		}
	}
	return nil
}

// yamlToJSONValue makes a YAML-decoded value JSON-encodable: YAML allows
// non-string keys and timestamps, JSON does not.
func yamlToJSONValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = yamlToJSONValue(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = yamlToJSONValue(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = yamlToJSONValue(e)
		}
		return t
	case time.Time:
		return t.Format(time.RFC3339)
	}
	return v
}

func parseTrust(raw json.RawMessage) (TrustLevel, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return TL0, nil
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if n < 0 || n > 3 {
			return 0, fmt.Errorf("trust %d out of range 0..3", n)
		}
		return TrustLevel(n), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("trust: %s", raw)
	}
	switch strings.ToLower(s) {
	case "tl0", "community":
		return TL0, nil
	case "tl1", "verified":
		return TL1, nil
	case "tl2", "organisation", "organization":
		return TL2, nil
	case "tl3", "system":
		return TL3, nil
	}
	return 0, fmt.Errorf("unknown trust level %q", s)
}

func parseLatencyClass(raw json.RawMessage) (LatencyClass, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Fast, nil
	}
	var n int
	if json.Unmarshal(raw, &n) == nil {
		if n < 0 || n > 3 {
			return 0, fmt.Errorf("latency_class %d out of range 0..3", n)
		}
		return LatencyClass(n), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("latency_class: %s", raw)
	}
	switch strings.ReplaceAll(strings.ToLower(s), "-", "_") {
	case "instant":
		return Instant, nil
	case "fast":
		return Fast, nil
	case "slow":
		return Slow, nil
	case "long_running", "longrunning":
		return LongRunning, nil
	}
	return 0, fmt.Errorf("unknown latency_class %q", s)
}

func parseSunset(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("sunset %q: want YYYY-MM-DD or RFC 3339", s)
}

// String of a LatencyClass, as manifests write it.
func (c LatencyClass) String() string {
	switch c {
	case Instant:
		return "instant"
	case Fast:
		return "fast"
	case Slow:
		return "slow"
	case LongRunning:
		return "long_running"
	}
	return "latency_class(" + strconv.Itoa(int(c)) + ")"
}

// String of a TrustLevel: TL0..TL3.
func (t TrustLevel) String() string { return "TL" + strconv.Itoa(int(t)) }
