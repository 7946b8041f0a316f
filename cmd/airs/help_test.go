package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// airs help exit-codes lists every error kind's code, and ours.
func TestExitCodesComplete(t *testing.T) {
	var out bytes.Buffer
	printExitCodes(&app{stdout: &out})
	byKind := map[string]error{}
	for _, s := range kindSentinels {
		byKind[pipeline.KindOf(s)] = s
	}
	for _, k := range pipeline.Kinds() {
		s, ok := byKind[k]
		if !ok {
			t.Errorf("kindSentinels lacks %s", k)
			continue
		}
		code := pipeline.ExitCode(s)
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s +\S`, code, k)).MatchString(out.String()) {
			t.Errorf("exit-codes lacks %d %s with its hint:\n%s", code, k, out.String())
		}
	}
	for _, c := range []int{exitOK, exitFailure, exitUsage, exitConfig, exitAuditBad, exitModel} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +\S`, c)).MatchString(out.String()) {
			t.Errorf("exit-codes lacks %d:\n%s", c, out.String())
		}
	}
}

// lineWriter hands each write to a channel, so a test can wait for one.
type lineWriter chan string

func (w lineWriter) Write(p []byte) (int, error) { w <- string(p); return len(p), nil }

// progressLines says what it does at once, then a line per interval until
// stopped, and nothing after.
func TestProgressLines(t *testing.T) {
	w := make(lineWriter, 64)
	stop := progressLines(w, "fitting the thing…", "fitting", time.Millisecond)
	if got := <-w; got != "fitting the thing…\n" {
		t.Fatalf("first line %q", got)
	}
	if got := <-w; !strings.HasPrefix(got, "  … still fitting (") {
		t.Fatalf("progress line %q", got)
	}
	stop()
	n := len(w)
	for range n {
		<-w // lines written before stop returned
	}
	select {
	case l := <-w:
		t.Errorf("a line after stop: %q", l)
	default:
	}
}
