// Command mkdemo writes the demo's sample documents into a directory.
package main

import (
	"fmt"
	"os"

	"github.com/airs-dev/airs/internal/demodata"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkdemo DIR")
		os.Exit(2)
	}
	if err := demodata.Write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "mkdemo:", err)
		os.Exit(1)
	}
}
