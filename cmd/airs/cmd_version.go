package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = ""

var versionCmd = &command{
	Name:    "version",
	Summary: "print the version of airs",
	Usage: `Usage:
  airs version

Prints the version, the Go toolchain and the platform airs was built for.

Examples:
  airs version
`,
	Run: func(a *app, args []string) error {
		fs := a.flags()
		pos, err := parseArgs(fs, args)
		if err != nil {
			return err
		}
		if len(pos) > 0 {
			return usagef("'version' takes no arguments")
		}
		fmt.Fprintf(a.stdout, "airs %s (%s, %s/%s)\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	},
}

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "devel-" + s.Value[:12]
			}
		}
	}
	return "devel"
}
