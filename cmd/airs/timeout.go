package main

import (
	"flag"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// checkTimeout rejects a --NAME duration flag given outside (0, 600 s]
// (pipeline.MaxTimeout). The pipeline itself silently replaces a timeout
// outside that range with the tool's latency-class default, so without
// this check `--timeout 20m` or `--timeout 0` would look accepted and do
// something else. A flag left unset is fine: the command's default applies.
func checkTimeout(fs *flag.FlagSet, name string) error {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	if !set {
		return nil
	}
	g, ok := fs.Lookup(name).Value.(flag.Getter)
	if !ok {
		return nil // not a duration flag: nothing to check
	}
	d, ok := g.Get().(time.Duration)
	if !ok {
		return nil
	}
	if d <= 0 || d > pipeline.MaxTimeout {
		return usagef("--%s %s is out of range: give a duration in (0, %gs], e.g. 500ms, 30s or 2m", name, d, pipeline.MaxTimeout.Seconds())
	}
	return nil
}
