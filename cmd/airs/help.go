package main

import (
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/airs-dev/airs/config"
	"github.com/airs-dev/airs/pipeline"
)

// runHelp is `airs help [COMMAND | config | exit-codes]`.
func runHelp(a *app, args []string) int {
	if len(args) == 0 {
		printMainUsage(a.stdout)
		return exitOK
	}
	switch topic := args[0]; topic {
	case "config":
		fmt.Fprintf(a.stdout, "An annotated airs.yaml (default location %s).\nErrors in the file are reported as file:line with what to change.\n\n%s", config.DefaultPath(), config.Example)
		return exitOK
	case "exit-codes":
		printExitCodes(a)
		return exitOK
	default:
		cmd := lookup(topic)
		if cmd == nil {
			fmt.Fprintf(a.stderr, "airs help: no help for %q%s\nTopics: the commands, config, exit-codes.\n", topic, suggest(topic))
			return exitUsage
		}
		// A command prints its usage, with its flags, on --help.
		a.cmd = cmd
		if err := cmd.Run(a, []string{"--help"}); err != nil && !errors.Is(err, flag.ErrHelp) {
			return report(a.stderr, cmd, err)
		}
		return exitOK
	}
}

// kindSentinels are the pipeline error kinds, in exit-code order
// (TestExitCodesComplete checks that none is missing).
var kindSentinels = []error{
	pipeline.ErrToolNotFound, pipeline.ErrToolDeprecated, pipeline.ErrChannelCapabilityDenied,
	pipeline.ErrIntentMisaligned, pipeline.ErrToolCapabilityDenied, pipeline.ErrSchemaValidationFailed,
	pipeline.ErrPayloadTooLarge, pipeline.ErrTimeout, pipeline.ErrProviderUnavailable,
	pipeline.ErrProviderCrashed, pipeline.ErrProviderRejected, pipeline.ErrRateLimited, pipeline.ErrCancelled,
	pipeline.ErrIntentVerificationRequired, pipeline.ErrWouldTimeout, pipeline.ErrAlreadyClaimed,
}

func printExitCodes(a *app) {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CODE\tMEANING\tWHAT TO DO")
	for _, r := range [][3]string{
		{"0", "ok", ""},
		{"1", "other error", "read the message"},
		{"2", "usage", "see 'airs help COMMAND'"},
		{"3", "invalid airs.yaml, or --config / AIRS_CONFIG names no file", "fix the file:line shown, or the path; see 'airs help config'"},
		{"4", "audit chain broken", "'airs audit verify' names the first bad line"},
		{"5", "model not available", "start Ollama (ollama serve) and pull the model (ollama pull NAME), or pass --model none; 'airs doctor' checks it"},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r[0], r[1], r[2])
	}
	for _, e := range kindSentinels {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", pipeline.ExitCode(e), pipeline.KindOf(e), pipeline.Hint(e))
	}
	tw.Flush()
}
