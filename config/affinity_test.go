package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAffinitySection(t *testing.T) {
	d, err := Parse("", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Affinity{Enabled: true, Window: 30 * time.Minute, Threshold: 3, KeepAlive: 5 * time.Minute}
	if d.Guard.Affinity != want {
		t.Fatalf("defaults: %+v, want %+v", d.Guard.Affinity, want)
	}
	c, err := Parse("airs.yaml", []byte("home: /tmp/h\nguard:\n  affinity:\n    window: 10m\n    threshold: 5\n    keep_alive: 2m\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := c.Guard.Affinity; a != (Affinity{Enabled: true, Window: 10 * time.Minute, Threshold: 5, KeepAlive: 2 * time.Minute}) {
		t.Fatalf("parsed: %+v", a)
	}
	if c.AffinityFile() != filepath.Join("/tmp/h", "guard", "affinity.json") {
		t.Errorf("AffinityFile %s", c.AffinityFile())
	}
	// The rest of the guard section does not reset it, nor it the guard.
	c, err = Parse("airs.yaml", []byte("guard:\n  enabled: false\n  affinity: {enabled: false}\n"))
	if err != nil || c.Guard.Enabled || c.Guard.Affinity.Enabled || c.Guard.Affinity.Window != 30*time.Minute {
		t.Fatalf("enabled false: %+v %v", c.Guard, err)
	}
	_, err = Parse("airs.yaml", []byte("guard:\n  affinity:\n    window: 10s\n    threshold: 0\n    keep_alive: 0s\n"))
	for _, w := range []string{
		"airs.yaml:3: guard.affinity.window 10s: want a duration from 1m0s to 24h0m0s",
		"airs.yaml:4: guard.affinity.threshold 0: want the number of calls",
		"airs.yaml:5: guard.affinity.keep_alive 0s: want a duration from 10s to 24h0m0s",
	} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	if _, err := Parse("airs.yaml", []byte("guard:\n  affinity:\n    window: 48h\n")); err == nil || !strings.Contains(err.Error(), "guard.affinity.window 48h0m0s") {
		t.Errorf("window 48h: %v", err)
	}
	if _, err := Parse("airs.yaml", []byte("guard:\n  affinity:\n    buckets: 3\n")); err == nil {
		t.Error("an unknown key under guard.affinity was accepted")
	}
}
