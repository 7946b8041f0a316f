//go:build inproc

package inproc

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/airs-dev/airs/grammar"
	"github.com/airs-dev/airs/selector"
)

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestPerTokenCost measures the time a token takes under the mask (fast-
// forward off, so every token is sampled) against sampling the same number
// of tokens from the whole vocabulary, on the same prompts, interleaved.
// INPROC_PERF_GGUF names another model (a realistic shape); default the
// tiny one.
func TestPerTokenCost(t *testing.T) {
	e := tinyEngine(t)
	if p := os.Getenv("INPROC_PERF_GGUF"); p != "" {
		var err error
		if e, _, err = Open(p, Options{ContextLen: 4096, Threads: 1}); err != nil {
			t.Fatal(err)
		}
	}
	qs := bfclSample(t, envInt("INPROC_PERF_N", 12))
	var con, unc []time.Duration
	for qi, q := range qs {
		tools, msgs, _ := bfclRequest(t, q)
		g, err := grammar.ToolCall(tools, grammar.ToolCallOptions{AllowNone: true, Options: genOpts})
		if err != nil {
			continue
		}
		prompt := ChatPrompt(msgs)
		s := Sampling{Temperature: 0.8, TopP: 0.95, Seed: uint64(qi + 1), NoFastForward: true}
		r, err := e.Constrained(context.Background(), prompt, g, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Sampled < 4 {
			continue
		}
		u, err := e.Unconstrained(context.Background(), prompt, r.Sampled, s)
		if err != nil {
			t.Fatal(err)
		}
		// per decoded token after the prompt
		con = append(con, (r.Total-r.Prefill)/time.Duration(r.Sampled-1))
		unc = append(unc, (u.Total-u.Prefill)/time.Duration(u.Sampled-1))
		t.Logf("%s: %d tokens, constrained %v/token (mask %v, exposed %v), unconstrained %v/token", q.ID, r.Sampled,
			con[len(con)-1], r.MaskTime/time.Duration(r.Sampled), r.MaskExposed/time.Duration(r.Sampled), unc[len(unc)-1])
	}
	mc, mu := median(con), median(unc)
	t.Logf("per token: constrained %v, unconstrained %v, ratio %.3f (medians over %d requests)", mc, mu, float64(mc)/float64(mu), len(con))
}

// TestVsOllamaFormat: time to a complete, valid call on the same GGUF and
// the same BFCL requests, in-process (greedy, with and without
// fast-forward) against Ollama's `format` path (greedy, the schema AIRS
// exports for it). Needs a server: OLLAMA_HOST, AIRS_E2E_MODEL and
// AIRS_INPROC_OLLAMA_GGUF (the file that model was created from), as
// scripts/e2e.sh sets them.
func TestVsOllamaFormat(t *testing.T) {
	host, model, gguf := os.Getenv("OLLAMA_HOST"), os.Getenv("AIRS_E2E_MODEL"), os.Getenv("AIRS_INPROC_OLLAMA_GGUF")
	if host == "" || model == "" || gguf == "" {
		t.Skip("needs OLLAMA_HOST, AIRS_E2E_MODEL, AIRS_INPROC_OLLAMA_GGUF (scripts/e2e.sh)")
	}
	// INPROC_VS_THREADS=N runs both engines on N threads, per token and
	// per batch; by default each runs with its own default thread counts
	// (Ollama: one per physical core; in-process: half the logical CPUs
	// per token, all of them for the prompt's batch).
	opts, oOpts := Options{ContextLen: 2048}, map[string]any{"temperature": 0, "seed": 1, "num_predict": 1024}
	if n := envInt("INPROC_VS_THREADS", 0); n > 0 {
		opts.Threads, opts.BatchThreads, oOpts["num_thread"] = n, n, n
	}
	t.Logf("threads: in-process %d per token, %d per batch (0: default); Ollama num_thread %v", opts.Threads, opts.BatchThreads, oOpts["num_thread"])
	e, closeE, err := Open(gguf, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer closeE()
	var oTok int
	var oEval, oLastPrefill time.Duration
	ollama := func(msgs []selector.Message, format json.RawMessage) (string, time.Duration, error) {
		body, _ := json.Marshal(map[string]any{"model": model, "messages": msgs, "format": format, "stream": false,
			"options": oOpts})
		t0 := time.Now()
		resp, err := http.Post(host+"/api/chat", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", 0, err
		}
		defer resp.Body.Close()
		var out struct {
			Message      struct{ Content string } `json:"message"`
			Error        string                   `json:"error"`
			EvalCount    int                      `json:"eval_count"`
			EvalDuration time.Duration            `json:"eval_duration"`
			LoadDuration time.Duration            `json:"load_duration"`
			// PromptEvalDuration: the prefill
			PromptEvalDuration time.Duration `json:"prompt_eval_duration"`
		}
		err = json.NewDecoder(resp.Body).Decode(&out)
		oTok += out.EvalCount
		oEval += out.EvalDuration
		oLastPrefill = out.PromptEvalDuration + out.LoadDuration
		return out.Message.Content, time.Since(t0), err
	}
	qs := bfclSample(t, envInt("INPROC_VS_N", 8))
	var tO, tFF, tNoFF []time.Duration
	var bothO, bothI []time.Duration // the requests Ollama answered validly
	validO, validI, n, forced, total, iTok := 0, 0, 0, 0, 0, 0
	var iDur time.Duration
	for i, q := range qs {
		tools, msgs, v := bfclRequest(t, q)
		format, _, err := selector.FormatFor(tools, true)
		if err != nil {
			continue
		}
		g, err := grammar.ToolCall(tools, grammar.ToolCallOptions{AllowNone: true, Options: GenerationOptions()})
		if err != nil {
			continue
		}
		if i == 0 { // warm both (model load, first grammar builds)
			ollama(msgs, format)
			e.Constrained(context.Background(), ChatPrompt(msgs), g, Sampling{}, nil)
			oTok, oEval = 0, 0
		}
		n++
		out, d, err := ollama(msgs, format)
		okO := err == nil && validate(v, out) == nil
		if okO {
			validO++
		} else {
			t.Logf("%s: Ollama output not valid (%v): %.200q", q.ID, err, out)
		}
		tO = append(tO, d)
		// Each in-process run follows an unrelated prompt, as each Ollama
		// request follows the previous request's: neither run finds this
		// request's prompt in its cache (the second would, otherwise).
		evict := func() {
			e.Unconstrained(context.Background(), "<|im_start|>user\nunrelated<|im_end|>\n", 1, Sampling{})
		}
		evict()
		r, err := e.Constrained(context.Background(), ChatPrompt(msgs), g, Sampling{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		if validate(v, r.Text) == nil {
			validI++
		} else {
			t.Errorf("%s: in-process output not valid: %s", q.ID, r.Text)
		}
		tFF = append(tFF, r.Total)
		iTok += r.Sampled + r.Forced
		iDur += r.Total - r.Prefill
		forced += r.Forced
		total += r.Forced + r.Sampled
		evict()
		r2, err := e.Constrained(context.Background(), ChatPrompt(msgs), g, Sampling{NoFastForward: true}, nil)
		if err != nil {
			t.Fatalf("%s: %v", q.ID, err)
		}
		tNoFF = append(tNoFF, r2.Total)
		t.Logf("%s: Ollama %v (valid %v, prefill+load %v); in-process fast-forward %v (prefill %v, %d sampled + %d forced), without %v (prefill %v, %d sampled)",
			q.ID, d.Round(time.Millisecond), okO, oLastPrefill.Round(time.Millisecond), r.Total.Round(time.Millisecond),
			r.Prefill.Round(time.Millisecond), r.Sampled, r.Forced, r2.Total.Round(time.Millisecond), r2.Prefill.Round(time.Millisecond), r2.Sampled)
		if okO {
			bothO, bothI = append(bothO, d), append(bothI, r.Total)
		}
	}
	mo, mf, mn := median(tO), median(tFF), median(tNoFF)
	t.Logf("time to a call over %d BFCL requests (medians): Ollama format %v (%d valid), in-process fast-forward %v (%d valid, forced fraction %.3f), in-process without fast-forward %v; Ollama/in-process %.2f, Ollama/no-FF %.2f",
		n, mo, validO, mf, validI, float64(forced)/float64(max(1, total)), mn, float64(mo)/float64(mf), float64(mo)/float64(mn))
	if len(bothO) > 0 {
		t.Logf("on the %d requests Ollama answered validly: Ollama %v, in-process fast-forward %v (medians), Ollama/in-process %.2f; Ollama's other %d outputs were not valid calls (no time to a valid call)",
			len(bothO), median(bothO), median(bothI), float64(median(bothO))/float64(median(bothI)), n-len(bothO))
	}
	t.Logf("generated tokens: Ollama %d in %v of eval (%.2f ms/token); in-process %d (sampled+forced) in %v after prefill (%.2f ms/token)",
		oTok, oEval, float64(oEval.Microseconds())/1000/float64(max(1, oTok)), iTok, iDur, float64(iDur.Microseconds())/1000/float64(max(1, iTok)))
}
