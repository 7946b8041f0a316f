package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/airs-dev/airs/guard"
)

var reviewCmd = &command{
	Name:    "review",
	Summary: "list, approve or deny the calls the guard holds or queued for review",
	Usage: `Usage:
  airs review [list] [--all] [--limit 100] [--offset 0] [--json]
  airs review approve ID [--always]
  airs review deny ID
  airs review grants [--json]
  airs review revoke AGENT TOOL

The guard holds every call of a destructive tool (delete-file, say) until a
person confirms it: 'airs call' and 'airs chat' ask at the terminal; a call
over HTTP answers 428 intent_verification_required with a confirmation id
and waits here, in the attention page (reviewers only) and in GET
/v1/reviews. Calls of the read-only tools named in guard.review_tools run
at once and are queued here for a look afterwards.

'list' shows the open confirmations and reviews, newest first (--all: the
decided ones of the last week too), --limit at a time from --offset.
Each agent has at most 100 confirmations open: past that a call that would
be held is refused (intent_misaligned) until some are decided or expire; an
expired confirmation is dropped (the call asks again when it is sent again). 'approve ID' lets exactly
that call (same agent, tool and params) through once, when it is sent
again before the confirmation expires (guard.expiry, default 15m);
--always lets every call of that tool by that agent through from now on
('grants' lists those, 'revoke' takes one back). 'deny ID' refuses it: the
call sent again fails with intent_misaligned. Every decision is in the
audit record of the call it lets through or refuses ('airs audit tail').

You decide as the operator of this machine (cli:<your OS user>): whoever
can run airs here can read and write $AIRS_HOME anyway.

Examples:
  airs review
  airs review approve cf-3f9a0c1d2e4b5a697881
  airs review approve cf-3f9a0c1d2e4b5a697881 --always
  airs review deny cf-3f9a0c1d2e4b5a697881
  airs review list --all --json | jq 'select(.status == "denied")'
  airs review revoke bot delete-file
`,
	Run: runReview,
}

func runReview(a *app, args []string) error {
	fs := a.flags()
	all := fs.Bool("all", false, "'list': decided and expired ones too")
	always := fs.Bool("always", false, "'approve': every call of the tool by the agent, not only this one")
	asJSON := fs.Bool("json", false, "print JSON (one review per line)")
	limit := fs.Int("limit", 100, "'list': at most this many")
	offset := fs.Int("offset", 0, "'list': skip this many (the newest)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		pos = []string{"list"}
	}
	g, err := a.guardian()
	if err != nil {
		return err
	}
	if g == nil {
		return errors.New("the guard is off (guard.enabled: false in airs.yaml): nothing is held for review")
	}
	want := func(n int, what string) error {
		if len(pos) != n+1 {
			return usagef("'review %s' takes %s", pos[0], what)
		}
		return nil
	}
	switch pos[0] {
	case "list":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		if *limit < 1 || *offset < 0 {
			return usagef("--limit is 1 or more, --offset 0 or more")
		}
		rs, err := g.List(guard.Filter{All: *all, Offset: *offset, Limit: *limit + 1})
		if err != nil {
			return err
		}
		more := len(rs) > *limit
		if more {
			rs = rs[:*limit]
		}
		if err := printReviews(a, rs, *asJSON); err != nil {
			return err
		}
		if more {
			fmt.Fprintf(a.stderr, "more: airs review list --offset %d\n", *offset+*limit)
		}
		return nil
	case "approve", "deny":
		if err := want(1, "one ID ('airs review' lists them)"); err != nil {
			return err
		}
		ch := guard.Once
		switch {
		case pos[0] == "deny" && *always:
			return usagef("--always goes with approve")
		case pos[0] == "deny":
			ch = guard.Deny
		case *always:
			ch = guard.Always
		}
		r, err := g.Decide(pos[1], ch, cliReviewer())
		if err != nil {
			return err
		}
		if *asJSON {
			return writeCompactJSON(a.stdout, r)
		}
		switch {
		case r.Kind == guard.KindReview:
			fmt.Fprintf(a.stdout, "%s: %s's call of %s marked %s\n", r.ID, r.Caller, r.Tool, r.Status)
		case ch == guard.Deny:
			fmt.Fprintf(a.stdout, "%s denied: %s's call of %s, sent again, fails with intent_misaligned\n", r.ID, r.Caller, r.Tool)
		case ch == guard.Always:
			fmt.Fprintf(a.stdout, "%s approved: every call of %s by %s now runs ('airs review revoke %s %s' takes it back)\n", r.ID, r.Tool, r.Caller, r.Caller, r.Tool)
		default:
			fmt.Fprintf(a.stdout, "%s approved: %s's call of %s runs once when it is sent again, until %s\n", r.ID, r.Caller, r.Tool, r.Expires.Local().Format("15:04:05"))
		}
		return nil
	case "grants":
		if err := want(0, "no arguments"); err != nil {
			return err
		}
		gs, err := g.Grants()
		if err != nil {
			return err
		}
		if *asJSON {
			for _, gr := range gs {
				if err := writeCompactJSON(a.stdout, gr); err != nil {
					return err
				}
			}
			return nil
		}
		if len(gs) == 0 {
			fmt.Fprintln(a.stdout, "no \"always\" grants")
			return nil
		}
		tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tTOOL\tBY\tSINCE\tCONFIRMATION")
		for _, gr := range gs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", gr.Caller, gr.Tool, gr.By, gr.At.Local().Format("2006-01-02 15:04"), gr.Review)
		}
		return tw.Flush()
	case "revoke":
		if err := want(2, "AGENT TOOL"); err != nil {
			return err
		}
		ok, err := g.Revoke(pos[1], pos[2])
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s holds no \"always\" grant for %s ('airs review grants' lists them)", pos[1], pos[2])
		}
		fmt.Fprintf(a.stdout, "revoked: %s's calls of %s wait for a person again\n", pos[1], pos[2])
		return nil
	}
	return usagef("unknown 'review' action %q: say list, approve, deny, grants or revoke", pos[0])
}

func printReviews(a *app, rs []guard.Review, asJSON bool) error {
	if asJSON {
		for _, r := range rs {
			if err := writeCompactJSON(a.stdout, r); err != nil {
				return err
			}
		}
		return nil
	}
	if len(rs) == 0 {
		fmt.Fprintln(a.stdout, "nothing to review")
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tSTATUS\tAGENT\tCALL\tASKED\tEXPIRES")
	for _, r := range rs {
		args := string(r.Params)
		if r.ParamsCut {
			args = "(params over 4 KiB: sha256 " + r.ParamsSHA256[:12] + "…)"
		}
		if len(args) > 80 {
			args = args[:77] + "..."
		}
		exp := "-"
		if !r.Expires.IsZero() {
			exp = r.Expires.Local().Format("15:04:05")
		}
		status := r.Status
		if r.DecidedBy != "" {
			status += " by " + r.DecidedBy
		}
		kind := r.Kind
		if r.AnomalyModel != "" { // here because of its anomaly score, not its tool
			kind += fmt.Sprintf(" (anomaly %.2f)", r.Anomaly)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s(%s)\t%s\t%s\n", r.ID, kind, status, r.Caller, r.Tool, strings.TrimSpace(args),
			r.Created.Local().Format(time.DateTime), exp)
	}
	return tw.Flush()
}
