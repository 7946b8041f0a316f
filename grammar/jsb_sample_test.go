package grammar

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// TestJSONSchemaBenchSampling is issue 3's sampling-compliance check: for
// every schema that compiles in a 500-schema sample of JSONSchemaBench
// (evenly spaced over the schemas sorted by id), five outputs drawn
// uniformly at random among the allowed tokens (a random model; EOS is one
// of the allowed tokens once the output is complete) must terminate within
// the token budget and validate with the reference validator. Strings are
// bounded for generation (Options.MaxStringBytes), as AIRS compiles tool
// grammars. Set JSB_SAMPLING=1 (JSB_SAMPLE=N for another sample size).
//
// Not yet part of make conformance. History: the first run (2026-11-30)
// found dead ends at the nesting limit (fixed: depth.go) and random walks
// that never closed open arrays and objects (generation now bounds them:
// Options.MaxContainerItems). A run with JSB_SAMPLE=40 still finds dead
// ends in Glaive schemas whose objects carry count checks: a path is taken
// on the assumption that a checked edge (a property count, a key still
// available) will pass, and then it does not — the liveness analysis
// assumes checks pass. See the issue 3 note.
func TestJSONSchemaBenchSampling(t *testing.T) {
	if os.Getenv("JSB_SAMPLING") == "" {
		t.Skip("set JSB_SAMPLING=1 to run the sampling-compliance check on JSONSchemaBench")
	}
	files, _ := filepath.Glob(filepath.Join(dataDir(), "jsonschemabench", "*.jsonl.gz"))
	if len(files) == 0 {
		t.Skipf("no JSONSchemaBench under %s", dataDir())
	}
	var all []jsbRecord
	for _, f := range files {
		all = append(all, readJSB(t, f)...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	const draws, budget = 5, 4000
	sample := 500
	if n, err := strconv.Atoi(os.Getenv("JSB_SAMPLE")); err == nil && n > 0 {
		sample = n
	}
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	rng := rand.New(rand.NewPCG(7, 11))
	var compiled, outputs, unterminated, invalid, skipped, deadEnds int
	for i := 0; i < sample; i++ {
		r := all[i*len(all)/sample]
		g, err := Compile(r.Schema, Options{MaxStringBytes: 64, MaxContainerItems: 8})
		if err != nil {
			continue
		}
		val := newValidatorOrNil(r.Schema)
		if val == nil {
			skipped++ // the reference validator cannot compile it (remote refs, …)
			continue
		}
		compiled++
		for d := 0; d < draws; d++ {
			tm := g.NewTokenMatcher(ti)
			var out []byte
			done, dead := false, false
			for step := 0; step < budget && !done; step++ {
				tm.FillMask(bits)
				id, n := -1, 0
				for w, x := range bits { // reservoir-pick one set bit uniformly
					for x != 0 {
						b := w*64 + trailingZeros(x)
						x &= x - 1
						n++
						if rng.IntN(n) == 0 {
							id = b
						}
					}
				}
				if id < 0 {
					deadEnds++
					dead = true
					t.Errorf("%s: dead end (no token allowed) after %d bytes", r.ID, len(out))
					break
				}
				if !tm.Accept(id) {
					t.Fatalf("%s: allowed token %d rejected after %q", r.ID, id, out)
				}
				if done = tm.IsTerminated(); !done {
					out = append(out, ti.v.Tokens[id]...)
				}
			}
			outputs++
			switch {
			case dead:
			case !done:
				unterminated++
				t.Errorf("%s: no EOS within %d tokens (%d bytes so far)", r.ID, budget, len(out))
			case !val.valid(out):
				invalid++
				t.Errorf("%s: sampled output does not validate: %.300s", r.ID, out)
			}
		}
	}
	t.Logf("sampling: %d of %d sampled schemas compiled and checked (%d skipped: reference validator cannot compile), %d outputs, %d dead ends, %d unterminated, %d invalid",
		compiled, sample, skipped, outputs, deadEnds, unterminated, invalid)
}
