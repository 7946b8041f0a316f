package grammar

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestJSONSchemaBenchSampling is the sampling-compliance check that
// CONFORMANCE.md reports ("Sampling compliance"): for
// every schema that compiles in a 500-schema sample of JSONSchemaBench
// (evenly spaced over the schemas sorted by id), five outputs drawn
// uniformly at random among the allowed tokens (a random model; EOS is one
// of the allowed tokens once the output is complete) must terminate within
// the token budget and validate with the reference validator. A dead end (a
// mask that allows nothing) fails it too. The grammars are compiled for
// generation: strings without maxLength hold at most 32 code points
// (Options.MaxStringBytes) and arrays and objects without maxItems or
// maxProperties at most 4 items (Options.MaxContainerItems), so that a
// random model, which fills nearly every string and list to its bound,
// terminates: the longest output of the sample takes about 3,000 tokens
// (4,000 with another seed), the budget is 8,000. (With 64 code points and
// 8 items there are still no dead ends and no invalid outputs, but the
// largest schemas need more than 20,000 tokens.)
//
// Opt-in (it needs ../shared/data): JSB_SAMPLING=1, JSB_SAMPLE=N for
// another sample size, JSB_SAMPLING_OUT=FILE to write the summary as JSON
// (make conformance puts it in CONFORMANCE.md). It takes about a minute.
//
// History: the first run (2026-11-30) found dead ends at the nesting limit
// (fixed: depth.go) and random walks that never closed open arrays and
// objects (Options.MaxContainerItems). Then (2026-12-01) dead ends where a
// checked edge was taken on the assumption that the object could still be
// completed: an undeclared key when maxProperties left room for the
// required properties only (Glaive), a key whose dependencies or declared
// order left the object unfinishable, a string pattern with too few code
// points left for its suffix, a format or minLength longer than the string
// bound, and objects the generation bound made unsatisfiable (the bound was
// applied to each conjunct of allOf, which took the smaller one). Every
// checked edge now asks whether the output can still be completed (rules.go:
// feasible, stringDists; build.go: the key start chosen at the comma), and
// MaxContainerItems bounds open values too. liveness_test.go reproduces
// each class on committed data.
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
	const draws, budget = 5, 8000
	opts := Options{MaxStringBytes: 32, MaxContainerItems: 4}
	sample := 500
	if n, err := strconv.Atoi(os.Getenv("JSB_SAMPLE")); err == nil && n > 0 {
		sample = min(n, len(all))
	}
	ti := NewTokenizerInfo(testVocab(t))
	bits := make([]uint64, ti.MaskWords())
	var compiled, compileErrors, outputs, unterminated, invalid, deadEnds int
	var skipped, skipWhy []string
	var lens []int
	// The evenly spaced sample, then every other schema with a form made
	// exact by the matcher-side uniqueItems check or lookahead (unique.go,
	// lookahead.go), so that the check covers them.
	var picked []jsbRecord
	in := map[string]bool{}
	for i := 0; i < sample; i++ {
		r := all[i*len(all)/sample]
		picked, in[r.ID] = append(picked, r), true
	}
	extra := 0
	for _, r := range all {
		sch := string(r.Schema)
		if !in[r.ID] && (strings.Contains(sch, `"uniqueItems"`) || strings.Contains(sch, "(?=") || strings.Contains(sch, "(?!")) {
			picked = append(picked, r)
			extra++
		}
	}
	for _, r := range picked {
		g, err := Compile(r.Schema, opts)
		if err != nil {
			compileErrors++
			continue
		}
		val, why := newValidatorErr(r.Schema)
		if val == nil { // the reference validator cannot compile it
			skipped = append(skipped, r.ID)
			skipWhy = append(skipWhy, firstLine(why))
			continue
		}
		compiled++
		// Each schema its own random stream, seeded by its id: its draws
		// do not depend on which schemas before it compiled (with one
		// stream for all, a keyword made exact elsewhere shifted every
		// later schema's draws).
		rng := rand.New(rand.NewPCG(7, idSeed(r.ID)))
		for d := 0; d < draws; d++ {
			tm := g.NewTokenMatcher(ti)
			var out []byte
			steps, dead := 0, false
			for ; steps < budget && !tm.IsTerminated(); steps++ {
				tm.FillMask(bits)
				id := pickUniform(bits, rng)
				if id < 0 {
					dead = true
					break
				}
				if !tm.Accept(id) {
					t.Fatalf("%s: allowed token %d rejected after %q", r.ID, id, out)
				}
				if !tm.IsTerminated() {
					out = append(out, ti.v.Tokens[id]...)
				}
			}
			outputs++
			switch {
			case dead:
				deadEnds++
				t.Errorf("%s: dead end (no token allowed) after %d bytes: ...%s", r.ID, len(out), out[max(0, len(out)-200):])
			case !tm.IsTerminated():
				unterminated++
				t.Errorf("%s: no EOS within %d tokens (%d bytes so far)", r.ID, budget, len(out))
			case !val.valid(out):
				invalid++
				t.Errorf("%s: sampled output does not validate: %.300s", r.ID, out)
			default:
				lens = append(lens, steps)
			}
		}
	}
	sort.Ints(lens)
	var p50, p99, most int
	if len(lens) > 0 {
		p50, p99, most = lens[len(lens)/2], lens[len(lens)*99/100], lens[len(lens)-1]
	}
	summary := fmt.Sprintf("sampling: %d sampled (%d evenly spaced, %d more with uniqueItems or lookahead), %d compile errors, %d skipped (reference validator cannot compile), %d checked, %d outputs: %d dead ends, %d unterminated, %d invalid; tokens per output p50 %d, p99 %d, max %d (budget %d)",
		len(picked), sample, extra, compileErrors, len(skipped), compiled, outputs, deadEnds, unterminated, invalid, p50, p99, most, budget)
	t.Log(summary)
	for i, id := range skipped {
		t.Logf("skipped %s: %s", id, skipWhy[i])
	}
	if p := os.Getenv("JSB_SAMPLING_OUT"); p != "" {
		b, err := json.Marshal(map[string]any{
			"command":        "JSB_SAMPLING=1 go test -run TestJSONSchemaBenchSampling ./grammar/",
			"sample":         sample,
			"extra":          extra,
			"draws":          draws,
			"budget":         budget,
			"vocab":          "qwen3",
			"options":        fmt.Sprintf("MaxStringBytes %d, MaxContainerItems %d", opts.MaxStringBytes, opts.MaxContainerItems),
			"compile_errors": compileErrors,
			"skipped":        len(skipped),
			"skipped_ids":    skipped,
			"skipped_why":    skipWhy,
			"checked":        compiled,
			"outputs":        outputs,
			"dead_ends":      deadEnds,
			"unterminated":   unterminated,
			"invalid":        invalid,
			"tokens":         map[string]int{"p50": p50, "p99": p99, "max": most},
			"summary":        summary,
		})
		if err == nil {
			err = os.WriteFile(p, append(b, '\n'), 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// idSeed is a stable seed from a schema id (FNV-1a).
func idSeed(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}
