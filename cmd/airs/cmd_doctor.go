package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/internal/modelcheck"
	"github.com/airs-dev/airs/model/inproc"
)

var doctorCmd = &command{
	Name:    "doctor",
	Summary: "check this machine's setup (config, spaces, Ollama and the model, data, storage) and say how to fix it",
	Usage: `Usage:
  airs doctor [--model MODEL] [--json]

Checks what AIRS needs, one line each, and gives the fix for each problem:

  config    the configuration file: found, readable, valid (or none: the defaults)
  home      the state folder ($AIRS_HOME): there or creatable, writable
  space     each space of the configuration: the folder exists and is readable
            (with no spaces: section, ~/Documents missing is said, not skipped)
  ollama    the server (ollama.host, OLLAMA_HOST): reachable, its version,
            the models pulled, the configured model (or --model) among them
  inproc    the in-process engine: built into this binary or not, and the
            GGUF model.engine inproc names
  data      the public data the evals read ($DATA_DIR, else ../shared/data)
  storage   the audit log and state: files under the home, or PostgreSQL
            (storage.dsn) and Temporal (chains.address) when configured

A line is ok, note (something optional is missing: AIRS works without it)
or FAIL (something configured does not work). The exit code is 0 when no
line is FAIL, 1 otherwise.

Examples:
  airs doctor
  airs doctor --model qwen3:4b      # is this model ready to use?
  airs doctor --json | jq '.checks[] | select(.status=="fail")'
`,
	Run: runDoctor,
}

// The three outcomes of a check.
const (
	checkOK   = "ok"
	checkNote = "note"
	checkFail = "fail"
)

// check is one line of the doctor's report.
type check struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

type doctorReport struct {
	OK     bool    `json:"ok"`
	Config string  `json:"config,omitempty"`
	Checks []check `json:"checks"`
}

func runDoctor(a *app, args []string) error {
	fs := a.flags()
	model := fs.String("model", "", "also check this Ollama `model` (default: ollama.model in airs.yaml)")
	asJSON := fs.Bool("json", false, "print the checks as JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("'doctor' takes no arguments")
	}
	ctx, cancel := context.WithTimeout(a.context(), 20*time.Second)
	defer cancel()
	r := diagnose(ctx, a.configFlag, *model)
	if *asJSON {
		if err := writeJSON(a.stdout, r); err != nil {
			return err
		}
	} else {
		printDoctor(a, r)
	}
	if !r.OK {
		return &exitError{code: exitFailure}
	}
	return nil
}

func printDoctor(a *app, r doctorReport) {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fails := 0
	for _, c := range r.Checks {
		status := c.Status
		if status == checkFail {
			status = "FAIL"
			fails++
		}
		// One line per check: a multi-line error (a driver's) is joined.
		detail := strings.Join(strings.Fields(strings.ReplaceAll(c.Detail, "\n", " ")), " ")
		fmt.Fprintf(tw, "%s\t%s\t%s\n", status, c.Name, detail)
		if c.Fix != "" {
			for i, l := range strings.Split(c.Fix, "\n") {
				lead := "fix:"
				if i > 0 {
					lead = "    "
				}
				fmt.Fprintf(tw, "\t\t  %s %s\n", lead, l)
			}
		}
	}
	tw.Flush()
	if fails == 0 {
		fmt.Fprintln(a.stdout, "\nWhat is configured works.")
	} else {
		fmt.Fprintf(a.stdout, "\n%d problem(s): fix the FAIL lines above, then run 'airs doctor' again.\n", fails)
	}
}

// diagnose runs every check. It never stops at the first problem: a
// newcomer should see all of them at once.
func diagnose(ctx context.Context, configFlag, model string) doctorReport {
	var r doctorReport
	add := func(c check) { r.Checks = append(r.Checks, c) }

	path, explicit := config.Path(configFlag)
	r.Config = path
	cfg, err := config.Load(configFlag)
	var missing *config.MissingFileError
	switch {
	case errors.As(err, &missing):
		add(check{"config", checkFail, path + " does not exist (named by --config or AIRS_CONFIG; the other checks use the defaults)",
			"create it ('airs help config' prints an annotated one), or unset AIRS_CONFIG to use the defaults"})
	case err != nil:
		add(check{"config", checkFail, err.Error() + " (the other checks use the defaults)", "fix the lines named above; 'airs help config' shows every key"})
	case cfg.File == "" && !explicit:
		add(check{"config", checkOK, "no file at " + path + ": the defaults apply (no model, spaces cwd and ~/Documents)",
			"optional: 'airs help config' prints an annotated airs.yaml to start from"})
	default:
		add(check{"config", checkOK, cfg.File + " is valid", ""})
	}
	if cfg == nil {
		// Without a configuration only what needs none can be checked.
		cfg, _ = config.Parse("", nil)
		if cfg == nil {
			r.OK = false
			return r
		}
	} else if model == "" {
		model = cfg.Ollama.Model
	}

	add(checkHome(cfg.Home))
	for _, c := range checkSpaces(cfg) {
		add(c)
	}
	for _, c := range checkOllama(ctx, cfg, model) {
		add(c)
	}
	add(checkInproc(cfg))
	add(checkData())
	for _, c := range checkStorage(ctx, cfg) {
		add(c)
	}
	r.OK = !slices.ContainsFunc(r.Checks, func(c check) bool { return c.Status == checkFail })
	return r
}

// checkHome: the state folder exists and is writable, or can be created.
func checkHome(home string) check {
	st, err := os.Stat(home)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// The first command creates it: its nearest existing parent must
		// be writable.
		parent := filepath.Dir(home)
		for {
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
			parent = filepath.Dir(parent)
		}
		if err := writable(parent); err != nil {
			return check{"home", checkFail, home + " does not exist and cannot be created (" + err.Error() + ")",
				"set home: in airs.yaml or AIRS_HOME to a folder you can write"}
		}
		return check{"home", checkOK, home + " (created by the first command that keeps state)", ""}
	case err != nil:
		return check{"home", checkFail, home + ": " + err.Error(), "set home: in airs.yaml or AIRS_HOME to a folder you can write"}
	case !st.IsDir():
		return check{"home", checkFail, home + " is a file, not a folder", "set home: in airs.yaml or AIRS_HOME to a folder"}
	}
	if err := writable(home); err != nil {
		return check{"home", checkFail, home + " is not writable (" + err.Error() + ")", "chmod u+w " + home + ", or set AIRS_HOME elsewhere"}
	}
	return check{"home", checkOK, home, ""}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writable creates and removes a file in dir.
func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".airs-doctor-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// checkSpaces: each configured space's folder exists and can be listed.
// With the default spaces, ~/Documents missing is said: the space
// documents, which the demo and the seed pipelines read, is then absent.
func checkSpaces(cfg *config.Config) []check {
	var out []check
	names := make([]string, 0, len(cfg.Spaces))
	for n := range cfg.Spaces {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		dir := cfg.Spaces[n]
		name := "space " + n
		st, err := os.Stat(dir)
		switch {
		case err != nil:
			out = append(out, check{name, checkFail, dir + ": " + err.Error(), "create the folder (mkdir -p " + dir + ") or fix spaces." + n + " in airs.yaml"})
		case !st.IsDir():
			out = append(out, check{name, checkFail, dir + " is not a folder", "point spaces." + n + " in airs.yaml at a folder"})
		default:
			if _, err := os.ReadDir(dir); err != nil {
				out = append(out, check{name, checkFail, dir + " cannot be read (" + err.Error() + ")", "chmod u+rx " + dir + ", or point spaces." + n + " elsewhere"})
			} else {
				out = append(out, check{name, checkOK, dir, ""})
			}
		}
	}
	docs := "~/Documents"
	if h, err := os.UserHomeDir(); err == nil {
		docs = filepath.Join(h, "Documents")
	}
	if _, ok := cfg.Spaces["documents"]; !ok && !exists(docs) {
		out = append(out, check{"space documents", checkNote, docs + " does not exist, so there is no space documents (the seed pipelines read it)",
			"mkdir -p " + docs + " (then 'airs demo docs " + filepath.Join(docs, "airs-demo") + "' writes sample PDFs), or name your folders under spaces: in airs.yaml"})
	}
	if len(cfg.Spaces) == 0 {
		out = append(out, check{"spaces", checkNote, "no spaces: the file tools have nothing to read", "add spaces: {NAME: FOLDER} to airs.yaml"})
	}
	return out
}

// checkOllama: the server, its version and models, and the model in use.
// A model that is configured (or named with --model) and not usable is a
// failure; with none configured an absent server is only a note (the
// no-LLM mode needs none).
func checkOllama(ctx context.Context, cfg *config.Config, model string) []check {
	if cfg.Model.Engine == config.EngineInproc && model == cfg.Ollama.Model {
		// The in-process engine reads a pulled model from Ollama's store;
		// the server need not run.
		model = ""
	}
	s := modelcheck.Probe(ctx, cfg.Ollama.Host)
	var out []check
	configured := model != "" && model != "none"
	switch {
	case !s.Reachable() && configured:
		out = append(out, check{"ollama", checkFail, "not reachable at " + s.Host + " (" + s.Err.Error() + "); the model " + model + " is configured",
			"install Ollama: " + modelcheck.InstallURL + " (Linux: curl -fsSL https://ollama.com/install.sh | sh)\nstart it: ollama serve\nget the model: ollama pull " + model + "\nor leave the model unset (ollama.model: \"\") for the no-LLM mode"})
		return out
	case !s.Reachable():
		out = append(out, check{"ollama", checkNote, "not reachable at " + s.Host + ": AIRS runs in the no-LLM mode (no model is configured)",
			"to use a model: install Ollama (" + modelcheck.InstallURL + "), ollama serve, ollama pull qwen3:4b, then airs chat --model qwen3:4b"})
		return out
	}
	models := "no models pulled"
	if len(s.Models) > 0 {
		models = "models: " + strings.Join(s.Models, ", ")
	}
	out = append(out, check{"ollama", checkOK, "Ollama " + s.Version + " at " + s.Host + "; " + models, ""})
	switch {
	case !configured:
		out = append(out, check{"model", checkNote, "no model configured: the no-LLM mode",
			"pass --model NAME, or set ollama.model in airs.yaml (one of the pulled models, or ollama pull qwen3:4b)"})
	case s.Has(model):
		out = append(out, check{"model", checkOK, model + " is pulled", ""})
	default:
		out = append(out, check{"model", checkFail, model + " is configured but not pulled", "ollama pull " + model})
	}
	if em := cfg.Ollama.EmbedModel; em != "" {
		if s.Has(em) {
			out = append(out, check{"embed model", checkOK, em + " is pulled", ""})
		} else {
			out = append(out, check{"embed model", checkFail, em + " (ollama.embed_model) is not pulled", "ollama pull " + em})
		}
	}
	return out
}

// checkInproc: whether this binary has the in-process engine, and when
// airs.yaml selects it, whether its model is there.
func checkInproc(cfg *config.Config) check {
	if cfg.Model.Engine != config.EngineInproc {
		if inproc.Built {
			return check{"inproc", checkOK, "the in-process engine is built in (model.engine: inproc uses it)", ""}
		}
		return check{"inproc", checkNote, "the in-process engine is not built into this binary (not needed with Ollama)",
			"optional: make inproc builds bin/airs-inproc (cgo and a C compiler)"}
	}
	if !inproc.Built {
		return check{"inproc", checkFail, "model.engine is inproc, but this binary has no in-process engine",
			"build it: make inproc (then run bin/airs-inproc), or set model.engine: ollama"}
	}
	if g := cfg.Model.GGUF; g != "" {
		if _, err := os.Stat(g); err != nil {
			return check{"inproc", checkFail, "model.gguf " + g + ": " + err.Error(), "point model.gguf at a GGUF file"}
		}
		return check{"inproc", checkOK, "built in; model.gguf " + g, ""}
	}
	if cfg.Model.Name != "" {
		return check{"inproc", checkOK, "built in; model.name " + cfg.Model.Name + " is read from Ollama's store at start", ""}
	}
	return check{"inproc", checkFail, "model.engine is inproc but names no model", "set model.gguf: FILE or model.name: NAME (pulled into Ollama)"}
}

// dataSets are the folders of the public data that the evals read.
var dataSets = []string{"bfcl", "bfcl_multi_turn", "retrieval", "jsonschemabench"}

// checkData: the public data the evals read. Optional, unless DATA_DIR
// names a folder that is not there.
func checkData() check {
	dir, set := os.Getenv("DATA_DIR"), true
	if dir == "" {
		dir, set = defaultDataDir, false
	}
	var have []string
	for _, d := range dataSets {
		if st, err := os.Stat(filepath.Join(dir, d)); err == nil && st.IsDir() {
			have = append(have, d)
		}
	}
	fix := "only the evals need it: DATA_DIR=FOLDER with " + strings.Join(dataSets, "/, ") + "/ (see ../shared/data/README.md, or the sources each eval's error names); 'airs eval bfcl --model none --data evals/bfcl/testdata' runs without it"
	switch {
	case len(have) == len(dataSets):
		return check{"data", checkOK, dir + ": " + strings.Join(have, ", "), ""}
	case len(have) > 0:
		return check{"data", checkNote, dir + ": " + strings.Join(have, ", ") + " (some evals' data is missing)", fix}
	case set:
		return check{"data", checkFail, "DATA_DIR=" + dir + " holds none of " + strings.Join(dataSets, ", "), fix}
	default:
		return check{"data", checkNote, "no eval data at " + dir + " (DATA_DIR is not set)", fix}
	}
}

// checkStorage: files under the home, or PostgreSQL and Temporal when
// airs.yaml names them.
func checkStorage(ctx context.Context, cfg *config.Config) []check {
	var out []check
	pg := slices.Contains([]string{cfg.Storage.Audit, cfg.Storage.Index, cfg.Storage.Learned, cfg.Storage.Sessions, cfg.Storage.Guard}, config.StoragePostgres)
	if cfg.Storage.Audit != config.StoragePostgres {
		audit := cfg.AuditPath()
		if f, err := os.Open(audit); err == nil {
			f.Close()
			out = append(out, check{"storage", checkOK, "files under the home; audit log " + audit + " (airs audit verify checks its chain)", ""})
		} else if errors.Is(err, fs.ErrNotExist) {
			out = append(out, check{"storage", checkOK, "files under the home; no audit log yet (the first call writes " + audit + ")", ""})
		} else {
			out = append(out, check{"storage", checkFail, "audit log " + audit + ": " + err.Error(), "make it readable and writable by this user"})
		}
	}
	if pg {
		db, err := openPG(cfg)
		if err != nil {
			out = append(out, check{"postgres", checkFail, err.Error(),
				"start PostgreSQL 15+ with pgvector and check storage.dsn (scripts/pg.sh starts a throwaway one); docs/deploy.md"})
		} else {
			db.Close()
			out = append(out, check{"postgres", checkOK, "reachable at " + cfg.Storage.RedactedDSN() + "; schema migrated", ""})
		}
	}
	if cfg.Chains.Engine == config.ChainsTemporal {
		d := net.Dialer{Timeout: 3 * time.Second}
		c, err := d.DialContext(ctx, "tcp", cfg.Chains.Address)
		if err != nil {
			out = append(out, check{"temporal", checkFail, "chains.engine is temporal, but " + cfg.Chains.Address + " does not answer (" + err.Error() + ")",
				"start the Temporal server (temporal server start-dev), fix chains.address, or set chains.engine: embedded; each replica also runs 'airs worker'"})
		} else {
			c.Close()
			out = append(out, check{"temporal", checkOK, "chains on Temporal at " + cfg.Chains.Address + " (each replica runs 'airs worker')", ""})
		}
	}
	return out
}
