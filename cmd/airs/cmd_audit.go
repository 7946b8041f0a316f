package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline/audit"
	"github.com/airs-dev/airs/store/pg"
)

var auditCmd = &command{
	Name:    "audit",
	Summary: "verify the audit log's hash chain, or show its last records",
	Usage: `Usage:
  airs audit verify [--json]
  airs audit tail [-n N] [--json]

Every call is recorded in $AIRS_HOME/audit.jsonl before its result is
delivered: who called which tool of which provider, a SHA-256 of the params
(never the params), the outcome and the latency. Each record carries the
hash of the one before, so editing, deleting or reordering records breaks
the chain.

'verify' reads the whole log and checks every link. It exits 0 when the
chain holds and prints the last record's hash — keep that hash somewhere
else if you need to detect the log being cut short or replaced wholesale.
It exits 4 and names the first broken line when it does not.

With storage.audit: postgres in airs.yaml, both read the database at
storage.dsn instead. There each process appends to a chain of its own, and
every record also has a seq from one sequence, the order 'tail' shows;
verify checks every chain, that each record's seq and chain are the ones
its hashed line says (so none moves between chains or in the order), and
that each chain's head row names its last record, which catches records cut
from a chain's end. It lists the chains with their records and last hashes
(the newest 20; --json lists all): anchor those.

'tail' prints the last N records, oldest first. A call AIRS ran ahead of
time for a predicted one (guard.speculation) is marked [speculative]; a real
call answered from it says [from ID], naming it.

Examples:
  airs audit verify
  airs audit tail -n 20
  airs audit tail --json | jq 'select(.outcome != "ok")'
`,
	Run: runAudit,
}

func runAudit(a *app, args []string) error {
	fs := a.flags()
	n := fs.Int("n", 10, "how many records 'tail' prints")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("say 'verify' or 'tail'")
	}
	c, err := a.config()
	if err != nil {
		return err
	}
	src := auditSource{path: c.AuditPath()}
	if c.Storage.Audit == config.StoragePostgres {
		db, err := a.sharedPG()
		if err != nil {
			return err
		}
		src = auditSource{db: db, path: "postgres " + c.Storage.RedactedDSN()}
	}
	switch pos[0] {
	case "verify":
		return auditVerify(a, src, *asJSON)
	case "tail":
		if *n < 1 {
			return usagef("-n must be at least 1")
		}
		return auditTail(a, src, *n, *asJSON)
	default:
		return usagef("unknown 'audit' action %q: say 'verify' or 'tail'", pos[0])
	}
}

// auditSource is the audit log to read: the file at path, or db's.
type auditSource struct {
	db   *pg.DB
	path string // the file, or how to name the database in messages
}

func (s auditSource) verify() (*audit.Report, error) {
	if s.db != nil {
		return s.db.VerifyAudit(context.Background())
	}
	return audit.Verify(s.path)
}

func (s auditSource) tail(n int) ([]audit.Record, error) {
	if s.db != nil {
		return s.db.TailAudit(context.Background(), n)
	}
	return audit.Tail(s.path, n)
}

func auditVerify(a *app, src auditSource, asJSON bool) error {
	path := src.path
	rep, err := src.verify()
	if errors.Is(err, fs.ErrNotExist) {
		if asJSON {
			return writeJSON(a.stdout, map[string]any{"path": path, "ok": true, "records": 0})
		}
		fmt.Fprintf(a.stdout, "ok: no audit log yet at %s (no calls recorded)\n", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	if asJSON {
		out := map[string]any{"path": path, "ok": rep.OK(), "records": rep.Records, "last_seq": rep.LastSeq,
			"last_hash": rep.LastHash, "torn_tail_bytes": rep.TornTail}
		if rep.Break != nil {
			out["break"] = rep.Break
		}
		if rep.Chains != nil {
			out["chains"] = rep.Chains
		}
		if err := writeJSON(a.stdout, out); err != nil {
			return err
		}
	}
	if !rep.OK() {
		if !asJSON {
			fmt.Fprintf(a.stdout, "BROKEN: %s: %d records verify, then %s\n", path, rep.Records, rep.Break)
		}
		return &exitError{code: exitAuditBad, err: fmt.Errorf("the audit chain is broken at %s\nhint: the log was edited or damaged there; keep a copy for inspection before writing to it again", rep.Break)}
	}
	if !asJSON && rep.Chains != nil {
		used := chainsWithRecords(rep.Chains)
		fmt.Fprintf(a.stdout, "ok: %s: %d records in %d chains, every chain intact, merged in seq order, last seq %d\n", path, rep.Records, len(used), rep.LastSeq)
		printChains(a, used)
	} else if !asJSON {
		fmt.Fprintf(a.stdout, "ok: %s: %d records, chain intact, last seq %d, last hash %s\n", path, rep.Records, rep.LastSeq, rep.LastHash)
		if rep.TornTail > 0 {
			fmt.Fprintf(a.stdout, "note: %d bytes of an unfinished last record (a crash mid-write; never acknowledged) will be dropped on the next write\n", rep.TornTail)
		}
	}
	return nil
}

// maxChainsListed is how many chains verify's text lists (the newest);
// --json lists every one.
const maxChainsListed = 20

// chainsWithRecords leaves out the chains without records: chain 0 of a
// database whose log was never kept as one chain.
func chainsWithRecords(chains []audit.ChainReport) []audit.ChainReport {
	var used []audit.ChainReport
	for _, c := range chains {
		if c.Records > 0 {
			used = append(used, c)
		}
	}
	return used
}

// printChains lists the chains of a log kept as several (PostgreSQL: one
// per process) with their records and heads, the newest last.
func printChains(a *app, used []audit.ChainReport) {
	if n := len(used) - maxChainsListed; n > 0 {
		fmt.Fprintf(a.stdout, "  … %d older chains not listed (--json lists every chain)\n", n)
		used = used[n:]
	}
	for _, c := range used {
		origin := ""
		if c.Origin != "" {
			origin = " (" + c.Origin + ")"
		}
		fmt.Fprintf(a.stdout, "  chain %d: %d records, last seq %d, last hash %s%s\n", c.Chain, c.Records, c.LastSeq, c.LastHash, origin)
	}
}

func auditTail(a *app, src auditSource, n int, asJSON bool) error {
	path := src.path
	recs, err := src.tail(n)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.stderr, "no audit log yet at %s\n", path)
		return nil
	}
	if err != nil {
		return err
	}
	if asJSON {
		for _, r := range recs {
			if err := writeCompactJSON(a.stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tCALLER\tTOOL\tPROVIDER\tOUTCOME\tLATENCY\tCALL ID")
	for _, r := range recs {
		outcome := r.Outcome
		if r.Error != "" {
			outcome += " (" + r.Error + ")"
		}
		if r.Intent != "" {
			outcome += " [" + r.Intent
			if r.Reviewer != "" {
				outcome += " by " + r.Reviewer
			}
			outcome += " " + r.Review + "]"
		}
		switch {
		case r.Speculative: // run ahead for a predicted call; used if a later record names it
			outcome += " [speculative]"
		case r.SpeculativeHit:
			outcome += " [from " + r.SpeculationOf + "]"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Local().Format("2006-01-02 15:04:05"), r.Caller,
			r.Tool, r.Provider, outcome, time.Duration(r.LatencyNs).Round(time.Microsecond), r.CallID)
	}
	return tw.Flush()
}
