package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/guard"
	"github.com/airs-dev/airs/internal/engine"
	"github.com/airs-dev/airs/internal/settings"
	"github.com/airs-dev/airs/model/inproc"
	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/store/pg"
)

// app is what every subcommand shares: the standard streams, the
// --config flag, and lazily the configuration, the registry and the
// Manager. Subcommands ask for what they need; nothing is built twice.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	configFlag     string
	// inproc is the in-process model of this command (--engine inproc).
	inproc *inproc.Model
	cmd    *command // the running subcommand

	cfg    *config.Config
	policy *pipeline.StaticPolicy
	reg    *pipeline.Registry
	mcp    *engine.MCP  // the outside MCP servers registry() started; run closes them
	guard  *guard.Guard // nil until guardian() builds it, and when guard.enabled is false
	pgdb   *pg.DB       // the process's one PostgreSQL pool (app_storage.go); nil until used
	// closeWait bounds how long closing the Manager waits for handlers
	// that ignore their context (0: until they return); serve sets its
	// drain timeout so such a handler cannot hold a SIGTERM'd server.
	closeWait time.Duration
	// observer watches the Manager's calls (tracing: serve sets it).
	observer pipeline.CallObserver
}

// flags returns a FlagSet for the running subcommand that also accepts
// --config, and prints the command's Usage (with its flags) on -h/--help.
// A bad flag is not printed here: parseArgs returns it as a usageError, and
// report prints it once with a one-line hint (the flag package would print
// it, then the whole usage).
func (a *app) flags() *flag.FlagSet {
	cmd := a.cmd
	fs := flag.NewFlagSet("airs "+cmd.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.configFlag, "config", a.configFlag, "configuration `file` (default: $AIRS_CONFIG, else the user's airs.yaml)")
	fs.Usage = func() { printCommandUsage(a.stdout, cmd, fs) }
	return fs
}

func printCommandUsage(w io.Writer, cmd *command, fs *flag.FlagSet) {
	usage, examples, _ := strings.Cut(cmd.Usage, "\nExamples:\n")
	fmt.Fprint(w, strings.TrimRight(usage, "\n")+"\n")
	if fs != nil {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if examples != "" {
		fmt.Fprint(w, "\nExamples:\n"+examples)
	}
}

// parseArgs parses flags wherever they appear among the arguments (Go's
// flag package stops at the first positional one), so both
// `airs call NAME --args X` and `airs call --args X NAME` work. "--" ends
// the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	// The flag package calls Usage on every parse error, not only on
	// -h/--help: silence it while parsing and call it for help alone.
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if usage != nil {
					usage()
				}
				return nil, err
			}
			return nil, &usageError{msg: err.Error(), flags: true}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// config loads the configuration once.
func (a *app) config() (*config.Config, error) {
	if a.cfg == nil {
		c, err := config.Load(a.configFlag)
		if err != nil {
			return nil, err
		}
		a.cfg = c
		a.policy = settings.Policy(c)
	}
	return a.cfg, nil
}

// caller is the agent id this CLI process acts as: the local OS user
// mapped through cli.users. Never a flag: identity comes from the channel.
func (a *app) caller() (string, error) {
	c, err := a.config()
	if err != nil {
		return "", err
	}
	return c.CLIAgent(config.LocalUser())
}

// registry builds the tool registry: the builtins, then the manifests
// named in the configuration.
func (a *app) registry() (*pipeline.Registry, error) {
	if a.reg != nil {
		return a.reg, nil
	}
	c, err := a.config()
	if err != nil {
		return nil, err
	}
	spaces := engine.NewMCPSpaces(c)
	reg, err := engine.RegistryMCP(c, a.policy, spaces)
	if err != nil {
		return nil, err
	}
	// The MCP servers of airs.yaml and those installed in AIRS_HOME: their
	// tools are tools like the others, so every command that lists or
	// calls tools sees them. One that does not start is a warning.
	a.mcp = engine.StartMCP(a.context(), c, reg, a.logger(), versionString())
	spaces.Bind(a.mcp) // each server's resources: the space mcp-NAME
	for _, err := range a.mcp.Problems() {
		a.warnf("%v", err)
	}
	a.reg = reg
	return reg, nil
}

// close releases what the app started (the MCP servers).
func (a *app) close() {
	if a.mcp != nil {
		a.mcp.Close()
		a.mcp = nil
	}
	a.closePG()
}

// manager builds a Manager with the durable audit log. close releases
// both; call it when the command is done.
func (a *app) manager() (m *pipeline.Manager, close func(), err error) {
	reg, err := a.registry()
	if err != nil {
		return nil, nil, err
	}
	c := a.cfg
	if err := c.EnsureHome(); err != nil {
		return nil, nil, err
	}
	log, err := a.openAudit(c)
	if err != nil {
		return nil, nil, err
	}
	mc := settings.ManagerConfig(c)
	mc.Policy = a.policy
	mc.Registry = reg
	mc.Audit = log
	mc.Observer = a.observer
	if p, ok := log.(pgAudit); ok {
		// Replicas on one database share the claims: a client's retry on
		// another replica never runs a non-idempotent call twice.
		mc.Claims = callClaims(p.db, c)
	}
	g, err := a.guardian()
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	var ag *engine.AnomalyGate
	if g != nil {
		ag = a.anomalyGate()
		mc.Gate = ag.Learning(g) // a person's approval of a held call teaches the scorer
		mc.Scorer, mc.AnomalyThresholds = ag.Scorer, ag.Thresholds
	}
	mc.Level2 = level2(c, a.logger()) // provenance, flow policies, the intent verifier
	m, err = pipeline.NewManager(mc)
	if err != nil {
		log.Close()
		return nil, nil, err
	}
	return m, func() {
		if err := m.CloseWithin(a.closeWait); err != nil {
			a.warnf("%v", err)
		}
		if ag != nil {
			ag.Close()
		}
		log.Close()
	}, nil
}

// guardian is the guard layer (intent verification) over $AIRS_HOME/guard;
// nil when airs.yaml turns it off (guard.enabled: false).
func (a *app) guardian() (*guard.Guard, error) {
	if a.guard != nil {
		return a.guard, nil
	}
	c, err := a.config()
	if err != nil {
		return nil, err
	}
	if !c.Guard.Enabled {
		return nil, nil
	}
	if err := c.EnsureHome(); err != nil {
		return nil, err
	}
	store, _, err := a.guardStores(c)
	if err != nil {
		return nil, err
	}
	g, err := guard.New(guard.Config{Dir: c.GuardDir(), Store: store, ReviewTools: c.Guard.ReviewTools, Reviewers: c.Guard.Reviewers,
		Expiry: c.Guard.Expiry, MaxPending: c.Guard.MaxPending, Logger: a.logger()})
	if err != nil {
		return nil, err
	}
	a.guard = g
	return g, nil
}

// anomalyGate starts the anomaly gate (guard.anomaly): long-running
// commands follow the model file and SIGHUP and log anomalous calls; a
// missing model is said once when airs.yaml names one (the default path
// with no model yet is the quiet reduced mode of a new home).
func (a *app) anomalyGate() *engine.AnomalyGate {
	long := a.cmd != nil && a.cmd.Name == "serve"
	var lg *slog.Logger
	if long {
		lg = a.logger()
	}
	var db *pg.DB
	if a.cfg.Storage.Guard == config.StoragePostgres || a.cfg.Storage.Audit == config.StoragePostgres {
		db, _ = a.sharedPG() // an error: StartAnomalyOn opens its own and says why it cannot
	}
	ag := engine.StartAnomalyOn(a.cfg, db, lg, long)
	if ag.Notice != "" && (a.cfg.Guard.Anomaly.ModelSet || !ag.NoModel) {
		a.warnf("%s", ag.Notice)
	}
	return ag
}

// cliReviewer is who decides a confirmation at this terminal: the OS user,
// as the audit record and the review store name them.
func cliReviewer() string { return "cli:" + config.LocalUser() }

// auditLog is the audit backend the manager writes: the file log or
// PostgreSQL's (storage.audit).
type auditLog interface {
	pipeline.AuditSink
	Close() error
}

// openAudit opens the audit log storage.audit names. Other airs processes
// (a running `airs serve`, other CLI commands, other replicas on the same
// database) may have it open too: the file log serialises their appends
// into one chain; PostgreSQL gives each process a chain of its own, merged
// in one seq order (store/pg).
func (a *app) openAudit(c *config.Config) (auditLog, error) {
	if c.Storage.Audit == config.StoragePostgres {
		db, err := a.sharedPG()
		if err != nil {
			return nil, err
		}
		return pgAudit{db.AuditLogWith(pg.AuditOptions{Gather: c.Storage.AuditGather}), db}, nil
	}
	log, err := audit.Open(c.AuditPath())
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	return log, nil
}

// pgAudit is the audit log on the process's database (app.sharedPG, which
// app.close closes after it).
type pgAudit struct {
	*pg.AuditLog
	db *pg.DB
}

// openPG connects to storage.dsn and migrates its schema.
func openPG(c *config.Config) (*pg.DB, error) { return engine.OpenPG(context.Background(), c) }
