package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong in a configuration file, at a line.
type Problem struct {
	File string
	Line int // 0: the file as a whole
	Msg  string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	}
	return p.File + ": " + p.Msg
}

// Error lists every problem found in a configuration file, one per line,
// each as file:line: what is wrong and what to do.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Path returns the configuration file to read and whether it was named
// explicitly: flagValue if not empty, else $AIRS_CONFIG, else the default
// location (DefaultPath).
func Path(flagValue string) (path string, explicit bool) {
	if flagValue != "" {
		return flagValue, true
	}
	if env := os.Getenv("AIRS_CONFIG"); env != "" {
		return env, true
	}
	return DefaultPath(), false
}

// DefaultPath is airs.yaml in the user's configuration directory.
func DefaultPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return FileName
	}
	return filepath.Join(dir, "airs", FileName)
}

// DefaultHome is the default state directory: the user's data directory
// plus "airs" (see the package comment).
func DefaultHome() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "airs")
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "airs")
		}
	case "darwin", "ios":
		if d, err := os.UserConfigDir(); err == nil { // ~/Library/Application Support
			return filepath.Join(d, "airs")
		}
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".local", "share", "airs")
	}
	return filepath.Join(os.TempDir(), "airs-"+LocalUser())
}

// Load reads the configuration. flagValue is the --config flag ("" when not
// given); see Path for the lookup. A missing default file is not an error:
// the defaults apply. Every problem in the file is reported at once, as an
// *Error.
func Load(flagValue string) (*Config, error) {
	path, explicit := Path(flagValue)
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		return Parse(path, data)
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return Parse("", nil)
	case errors.Is(err, fs.ErrNotExist):
		return nil, &MissingFileError{Path: path}
	default:
		return nil, fmt.Errorf("reading config: %w", err)
	}
}

// MissingFileError is a configuration file named by --config or
// AIRS_CONFIG that does not exist: a configuration error, like an invalid
// file, not a silent fall back to the defaults.
type MissingFileError struct{ Path string }

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("config file %s does not exist: create it (see `airs help config`) or fix --config / AIRS_CONFIG", e.Path)
}

func (e *MissingFileError) Unwrap() error { return fs.ErrNotExist }

// The file's shape. Pointers and nil maps tell "absent" (take the default)
// from "empty".
type fileConfig struct {
	Home   string               `yaml:"home"`
	Spaces map[string]string    `yaml:"spaces"`
	Agents map[string]fileAgent `yaml:"agents"`
	Level2 fileLevel2           `yaml:"level2"`
	CLI    struct {
		Users map[string]string `yaml:"users"`
	} `yaml:"cli"`
	HTTP struct {
		Listen string `yaml:"listen"`
		Tokens []struct {
			SHA256 string `yaml:"sha256"`
			Agent  string `yaml:"agent"`
		} `yaml:"tokens"`
		MaxBody int64 `yaml:"max_body"`
		Limits  struct {
			SelectText   int `yaml:"select_text"`
			PlanText     int `yaml:"plan_text"`
			PlanParts    int `yaml:"plan_parts"`
			ChatText     int `yaml:"chat_text"`
			PipelineYAML int `yaml:"pipeline_yaml"`

			PerAddressPerSecond int `yaml:"per_address_per_second"`
			PerAddressBurst     int `yaml:"per_address_burst"`
			HeavyText           int `yaml:"heavy_text"`
			HeavyCallBody       int `yaml:"heavy_call_body"`
			HeavyPerAgent       int `yaml:"heavy_per_agent"`
			HeavyTotal          int `yaml:"heavy_total"`
		} `yaml:"limits"`
	} `yaml:"http"`
	Breaker struct {
		Failures *int     `yaml:"failures"`
		Window   Duration `yaml:"window"`
		Cooldown Duration `yaml:"cooldown"`
	} `yaml:"breaker"`
	CallerTimeouts struct {
		Timeouts *int     `yaml:"timeouts"`
		Window   Duration `yaml:"window"`
		Cooldown Duration `yaml:"cooldown"`
	} `yaml:"caller_timeouts"`
	RateLimit  *fileRate `yaml:"rate_limit"`
	MaxPayload *int      `yaml:"max_payload"`
	Latency    struct {
		Enabled      *bool `yaml:"enabled"`
		WouldTimeout *bool `yaml:"would_timeout"`
	} `yaml:"latency"`
	MaxSteps  *int     `yaml:"max_steps"`
	Manifests []string `yaml:"manifests"`
	Ollama    struct {
		Host       string `yaml:"host"`
		Model      string `yaml:"model"`
		EmbedModel string `yaml:"embed_model"`
	} `yaml:"ollama"`
	Model struct {
		Engine string `yaml:"engine"`
		GGUF   string `yaml:"gguf"`
		Name   string `yaml:"name"`
		// Threads: the in-process engine's threads per token (0: its default)
		Threads int `yaml:"threads"`
	} `yaml:"model"`
	Selection fileSelection `yaml:"selection"`
	Recording struct {
		Enabled bool     `yaml:"enabled"`
		Dir     string   `yaml:"dir"`
		Redact  []string `yaml:"redact"`
	} `yaml:"recording"`
	Recommend struct {
		Enabled     *bool    `yaml:"enabled"`
		Watch       *bool    `yaml:"watch"`
		TTL         Duration `yaml:"ttl"`
		PerMinute   *int     `yaml:"per_minute"`
		MaxActive   *int     `yaml:"max_active"`
		Threshold   *float64 `yaml:"threshold"`
		Cooldown    Duration `yaml:"cooldown"`
		SuppressAt  *int     `yaml:"suppress_after"`
		SuppressFor Duration `yaml:"suppress_for"`
	} `yaml:"recommend"`
	Guard struct {
		Enabled     *bool    `yaml:"enabled"`
		ReviewTools []string `yaml:"review_tools"`
		Reviewers   []string `yaml:"reviewers"`
		SelfApprove bool     `yaml:"self_approve"`
		Expiry      Duration `yaml:"expiry"`
		MaxPending  *int     `yaml:"max_pending"`
		Anomaly     struct {
			Model          string   `yaml:"model"`
			Warn           *float64 `yaml:"warn"`
			Review         *float64 `yaml:"review"`
			Block          *float64 `yaml:"block"`
			Candidate      string   `yaml:"candidate"`
			CandidateShare *float64 `yaml:"candidate_share"`
		} `yaml:"anomaly"`
		Affinity    fileAffinity    `yaml:"affinity"`
		Speculation fileSpeculation `yaml:"speculation"`
	} `yaml:"guard"`
	MCP     fileMCP     `yaml:"mcp"`
	Storage fileStorage `yaml:"storage"`
	Peers   []filePeer  `yaml:"peers"`
	Chains  fileChains  `yaml:"chains"`
	Claims  fileClaims  `yaml:"claims"`

	Telemetry fileTelemetry `yaml:"telemetry"` // config/telemetry.go
}

type fileAgent struct {
	Capabilities []string  `yaml:"capabilities"`
	Providers    []string  `yaml:"providers"`
	RateLimit    *fileRate `yaml:"rate_limit"`
	Trust        *int      `yaml:"trust"`
	Purpose      string    `yaml:"purpose"`
}

type fileRate struct {
	PerSecond float64 `yaml:"per_second"`
	Burst     int     `yaml:"burst"`
}

// UnmarshalYAML reads "30s", "1m30s" or a plain number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a duration like 30s or 1m30s", n.Line)
	}
	if secs, err := strconv.ParseFloat(n.Value, 64); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration: write it like 30s, 1m30s or 500ms", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}

// DefaultRedact are the keys always redacted in recordings; the file's
// recording.redact adds to them.
var DefaultRedact = []string{"password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie"}

// Parse parses and validates configuration bytes; file names it in errors
// and anchors relative paths ("" = no file: the defaults, paths relative
// to the working directory).
func Parse(file string, data []byte) (*Config, error) {
	p := &parser{file: file, name: file}
	if file == "" {
		p.name = "(defaults)"
	}
	var fc fileConfig
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &p.root); err != nil {
			return nil, &Error{Problems: p.yamlProblems(err)}
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
			return nil, &Error{Problems: p.yamlProblems(err)}
		}
	}
	c := p.build(&fc)
	if len(p.problems) > 0 {
		return nil, &Error{Problems: p.problems}
	}
	return c, nil
}

// EnsureHome creates the state directory (mode 0700: it holds the audit log
// and recorded sessions) if it does not exist.
func (c *Config) EnsureHome() error {
	if err := os.MkdirAll(c.Home, 0o700); err != nil {
		return fmt.Errorf("creating the state directory %s: %w (set AIRS_HOME to another place)", c.Home, err)
	}
	return nil
}
