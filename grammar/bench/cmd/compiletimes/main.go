// Command compiletimes prints, for every schema of the JSONSchemaBench files
// in a directory, whether it compiles and how long grammar.Compile took
// (default options, one schema at a time): "file<TAB>id<TAB>ok<TAB>ms".
// scripts/compile-ab.sh builds it against two trees and compares them on
// the schemas both compile. It uses only grammar.Compile, so it builds
// against older trees too.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/airs-dev/airs/grammar"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: compiletimes DIR (JSONSchemaBench *.jsonl.gz files)")
		os.Exit(2)
	}
	files, err := filepath.Glob(filepath.Join(os.Args[1], "*.jsonl*"))
	if err != nil || len(files) == 0 {
		fmt.Fprintf(os.Stderr, "compiletimes: no .jsonl(.gz) files in %s\n", os.Args[1])
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for _, f := range files {
		if err := file(w, f); err != nil {
			fmt.Fprintf(os.Stderr, "compiletimes: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

func file(w io.Writer, f string) error {
	fh, err := os.Open(f)
	if err != nil {
		return err
	}
	defer fh.Close()
	var r io.Reader = fh
	if strings.HasSuffix(f, ".gz") {
		gz, err := gzip.NewReader(fh)
		if err != nil {
			return err
		}
		r = gz
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	for sc.Scan() {
		var rec struct {
			ID     string          `json:"id"`
			Schema json.RawMessage `json:"schema"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		done := make(chan error, 1)
		t0 := time.Now()
		go func() { _, err := grammar.Compile(rec.Schema, grammar.Options{}); done <- err }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			err = fmt.Errorf("timeout")
		}
		fmt.Fprintf(w, "%s\t%s\t%v\t%.4f\n", filepath.Base(f), rec.ID, err == nil, float64(time.Since(t0).Nanoseconds())/1e6)
	}
	return sc.Err()
}
