package benchcli

import (
	"errors"
	"flag"
	"io"
	"testing"

	"github.com/airs-dev/airs/grammar"
)

func TestOptionsFollowTheFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	opts := Options(fs)
	if err := fs.Parse([]string{"--lenient", "--declared-order"}); err != nil {
		t.Fatal(err)
	}
	if o := opts(); !o.Lenient || o.Strict || o.PropertyOrder != grammar.DeclaredOrder {
		t.Fatalf("--lenient --declared-order gave %+v", o)
	}
}

// A run with what the command needs missing reports a usage mistake (the
// callers turn it into exit 2) and does no work.
func TestMistakesAreUsageErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		suite bool
		args  []string
	}{
		{"bench without --vocab", false, []string{"--data", "x.jsonl"}},
		{"bench without data", false, []string{"--vocab", "llama3"}},
		{"bench with a negative sample", false, []string{"--vocab", "llama3", "--sample", "-1", "x.jsonl"}},
		{"suite with an argument", true, []string{"somewhere"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Declare, parse, run: as the callers do.
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			var run func(pos []string) error
			if c.suite {
				r := Suite(fs)
				run = func(pos []string) error { return r(pos, io.Discard) }
			} else {
				r := Bench(fs)
				run = func(pos []string) error { return r(pos, io.Discard, io.Discard) }
			}
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if err := run(fs.Args()); !errors.Is(err, ErrUsage) {
				t.Fatalf("got %v, want a usage error", err)
			}
		})
	}
}
