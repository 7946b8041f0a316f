package main

// `airs-load fairness` measures whether one hostile agent degrades another
// agent's calls. A quiet agent makes ordinary calls (calculator, read-file,
// select) one after another with a short pause, as an agent between model
// turns does; in alternate rounds a hostile agent runs beside it with every
// abuse at once:
//
//   - own timeouts: compare on two large texts with a 60 ms deadline;
//   - huge inputs: /v1/select and /v1/plan texts just under their limits;
//   - abandoned requests: /v1/select and /v1/plan whose client leaves after
//     100 ms;
//   - held calls: delete-file of ever new paths in a space it may write,
//     each held for a person, until its pending confirmations are refused.
//
// The hostile agent asks again at once whatever it is told (a flood), or
// with -hostile-retry-after waits as a 429's or 503's Retry-After says
// (an agent that abuses what it is let do). Rounds alternate (quiet,
// hostile, hostile, quiet, …) so that whatever else loads the machine
// loads both kinds alike; the report is the median over rounds of the
// quiet agent's p50 and p99 and its success rate, per kind of round, and
// the ratio of the hostile rounds' median p99 to the quiet rounds'.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fairRound is one round's outcome for the quiet agent (and what the
// hostile agent got, in hostile rounds).
type fairRound struct {
	Hostile bool             `json:"hostile"`
	Calls   int              `json:"calls"`
	OK      int              `json:"ok"`
	P50ms   float64          `json:"p50_ms"`
	P99ms   float64          `json:"p99_ms"`
	Errors  map[string]int64 `json:"errors,omitempty"` // quiet agent's non-200 statuses (or "transport")
	// ServerCPUs and LoadCPUs: CPU seconds the server and this load
	// generator used in the round (0: unknown).
	ServerCPUs float64 `json:"server_cpu_s"`
	LoadCPUs   float64 `json:"load_cpu_s"`
	// HostileLoadCPUs: CPU seconds the hostile agent's own process used
	// in the round (0 when it runs in this process: then LoadCPUs has it).
	HostileLoadCPUs float64 `json:"hostile_load_cpu_s,omitempty"`
	// HostileStatuses: per abuse, the HTTP statuses the hostile agent got
	// ("left" for a request it abandoned).
	HostileStatuses map[string]map[string]int64 `json:"hostile_statuses,omitempty"`

	lat        []time.Duration            // the quiet agent's latencies, sorted
	byKind     map[string][]time.Duration // the same per kind of call (calculator, read-file, select)
	hostileErr error                      // the hostile agent's process failed
}

// fairSummary is the medians over rounds of one kind.
type fairSummary struct {
	Rounds  int     `json:"rounds"`
	P50ms   float64 `json:"p50_ms"`
	P99ms   float64 `json:"p99_ms"`
	Success float64 `json:"success"` // ok / calls over all rounds of the kind
	Calls   int     `json:"calls"`
	// PooledP99ms: the p99 of all the kind's latencies together, which
	// one slow round moves less than it moves that round's own p99.
	PooledP99ms float64 `json:"pooled_p99_ms"`
}

type fairResult struct {
	// Idle: the second agent made no requests (-abuses none).
	Idle        bool        `json:"idle,omitempty"`
	Quiet       fairSummary `json:"quiet"`
	WithHostile fairSummary `json:"with_hostile"`
	// P99Ratio: WithHostile.P99ms / Quiet.P99ms (medians over rounds).
	P99Ratio float64 `json:"p99_ratio"`
	// PooledRatio: WithHostile.PooledP99ms / Quiet.PooledP99ms, and
	// PooledCI its 95 % bootstrap interval (rounds of each kind resampled
	// with replacement, the round being the unit that load on the machine
	// moves as a whole).
	PooledRatio float64    `json:"pooled_p99_ratio"`
	PooledCI    [2]float64 `json:"pooled_p99_ratio_ci95"`
	// PooledP99ByCall: per kind of the quiet agent's calls, its pooled p99
	// alone and beside the second agent (ms): which calls the tail is of.
	PooledP99ByCall map[string][2]float64 `json:"pooled_p99_ms_by_call"`
	Rounds          []fairRound           `json:"rounds"`
}

type fairOptions struct {
	base, quietTok, hostileTok string
	readSpace, readPath        string
	writeSpace                 string
	round, pause               time.Duration
	quietClients               int
	selectText, planText       int // bytes just under the server's limits
	compareText                int // bytes of each compare text
	serverPID                  int
	hostilePause               time.Duration
	honorRetryAfter            bool
	abuses                     map[string]bool // nil: all
	// hostileProcess: the hostile agent runs in a process of its own (this
	// program, `airs-load fairness-hostile`), as a second agent would: its
	// goroutines, allocations and garbage collection then do not delay the
	// quiet agent's clients and their clocks in this process.
	hostileProcess bool
	// hostileNice lowers the hostile process's CPU priority (Linux nice):
	// a hostile client on another machine takes none of the server's CPU, and
	// the load generator's own requests are not what the benchmark measures.
	hostileNice int
}

func runFairness(args []string) int {
	fs := flag.NewFlagSet("fairness", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: airs-load fairness -url BASE -quiet TOKEN -hostile TOKEN [flags]

Alternates quiet rounds (the quiet agent alone) with hostile rounds (a
hostile agent beside it: own short timeouts, huge inputs, abandoned
requests, held destructive calls) and prints the quiet agent's median p50,
p99 and success rate per kind of round, and the p99 ratio, as one JSON line
(-json) or a table. The quiet token's agent needs ReadSpace(-read-space);
the hostile one's WriteSpace(-write-space) and ReadSpace(-read-space).

Flags:
`)
		fs.PrintDefaults()
	}
	var o fairOptions
	fs.StringVar(&o.base, "url", "http://127.0.0.1:7777", "the server's base URL")
	fs.StringVar(&o.quietTok, "quiet", "", "the quiet agent's bearer token (required)")
	fs.StringVar(&o.hostileTok, "hostile", "", "the hostile agent's bearer token (required)")
	fs.StringVar(&o.readSpace, "read-space", "docs", "space the quiet agent reads")
	fs.StringVar(&o.readPath, "read-path", "a.txt", "file of -read-space the quiet agent reads")
	fs.StringVar(&o.writeSpace, "write-space", "scratch", "space the hostile agent may write (its deletes are held)")
	rounds := fs.Int("rounds", 6, "rounds of each kind (quiet, hostile)")
	fs.DurationVar(&o.round, "round", 5*time.Second, "length of one round")
	fs.DurationVar(&o.pause, "pause", 20*time.Millisecond, "the quiet agent's pause between calls")
	fs.IntVar(&o.quietClients, "c", 2, "the quiet agent's concurrent clients")
	fs.IntVar(&o.selectText, "select-text", 8000, "bytes of the hostile agent's select texts (the default limit is 8 KiB)")
	fs.IntVar(&o.planText, "plan-text", 4000, "bytes of the hostile agent's plan texts (the default limit is 4 KiB)")
	fs.IntVar(&o.compareText, "compare-text", 250_000, "bytes of each of the hostile agent's compare texts (max_payload, 1 MiB by default, bounds both as JSON)")
	fs.IntVar(&o.serverPID, "server-pid", 0, "the server's process id: its CPU time per round is reported (Linux /proc)")
	fs.DurationVar(&o.hostilePause, "hostile-pause", 0, "the hostile agent's pause between requests of one abuse (0: at once)")
	fs.BoolVar(&o.honorRetryAfter, "hostile-retry-after", false, "the hostile agent waits as a 429's or 503's Retry-After says before that abuse's next request (default: it asks again at once, a flood)")
	abuses := fs.String("abuses", "", "the hostile agent's abuses, comma-separated (default all): "+strings.Join(abuseNames, ",")+"; none: an idle second agent, to measure the rounds' noise")
	inProcess := fs.Bool("hostile-in-process", false, "run the hostile agent in this process, beside the quiet agent's clients (default: a process of its own, as a second agent is; in one process its work delays the quiet agent's measurements)")
	fs.IntVar(&o.hostileNice, "hostile-nice", 0, "nice value (0-19) of the hostile agent's process: 19 models a client on another machine, whose requests take none of this machine's CPU but what the server spends on them (default 0: the same priority as the server)")
	asJSON := fs.Bool("json", false, "print one JSON line")
	_ = fs.Parse(args)
	if o.hostileNice < 0 || o.hostileNice > 19 {
		fmt.Fprintln(os.Stderr, "airs-load fairness: -hostile-nice takes 0 to 19")
		return 2
	}
	if o.hostileNice != 0 && *inProcess {
		fmt.Fprintln(os.Stderr, "airs-load fairness: -hostile-nice needs the hostile agent in a process of its own (drop -hostile-in-process)")
		return 2
	}
	o.hostileProcess = !*inProcess
	if *abuses != "" {
		o.abuses = map[string]bool{}
		for _, a := range strings.Split(*abuses, ",") {
			if a == "none" {
				continue
			}
			if !slices.Contains(abuseNames, a) {
				fmt.Fprintf(os.Stderr, "airs-load fairness: -abuses: no abuse %q; choose among %s\n", a, strings.Join(abuseNames, ","))
				return 2
			}
			o.abuses[a] = true
		}
	}
	if o.quietTok == "" || o.hostileTok == "" {
		fmt.Fprintln(os.Stderr, "airs-load fairness: -quiet and -hostile are required: the two agents' bearer tokens (scripts/fairness.sh makes a server and both)")
		return 2
	}
	o.base = strings.TrimSuffix(o.base, "/")
	res, err := fairness(context.Background(), o, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "airs-load fairness:", err)
		return 1
	}
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Println(string(b))
	} else {
		printFairness(os.Stdout, res)
	}
	return 0
}

// fairness runs 2×rounds rounds: pairs in alternating order (QH, HQ, QH…).
func fairness(ctx context.Context, o fairOptions, rounds int) (fairResult, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 60 * time.Second}
	var h hostileAgent = newHostile(o)
	if o.hostileProcess {
		p, err := startHostileProcess(o)
		if err != nil {
			return fairResult{}, err
		}
		defer p.close()
		h = p
	}
	var res fairResult
	for i := 0; i < rounds; i++ {
		order := []bool{false, true}
		if i%2 == 1 {
			order = []bool{true, false}
		}
		for _, hostile := range order {
			res.Rounds = append(res.Rounds, fairRoundRun(ctx, client, o, h, hostile))
		}
	}
	res.Idle = o.abuses != nil && len(o.abuses) == 0
	res.Quiet = summarize(res.Rounds, false)
	res.WithHostile = summarize(res.Rounds, true)
	if res.Quiet.P99ms > 0 {
		res.P99Ratio = res.WithHostile.P99ms / res.Quiet.P99ms
	}
	if res.Quiet.PooledP99ms > 0 {
		res.PooledRatio = res.WithHostile.PooledP99ms / res.Quiet.PooledP99ms
	}
	res.PooledCI = bootstrapRatio(res.Rounds, 2000, rand.New(rand.NewPCG(1, 2)))
	res.PooledP99ByCall = pooledByCall(res.Rounds)
	for _, r := range res.Rounds {
		if r.hostileErr != nil {
			return res, r.hostileErr
		}
	}
	return res, nil
}

// pooledP99 is the p99 of the latencies of rounds, all together.
func pooledP99(rounds []fairRound) float64 {
	var all []time.Duration
	for _, r := range rounds {
		all = append(all, r.lat...)
	}
	slices.Sort(all)
	return pctMs(all, 99)
}

// pooledByCall is, per kind of call, the pooled p99 of the quiet rounds
// and of the hostile ones.
func pooledByCall(rounds []fairRound) map[string][2]float64 {
	all := map[string][2][]time.Duration{}
	for _, r := range rounds {
		k := 0
		if r.Hostile {
			k = 1
		}
		for name, l := range r.byKind {
			v := all[name]
			v[k] = append(v[k], l...)
			all[name] = v
		}
	}
	out := map[string][2]float64{}
	for name, v := range all {
		slices.Sort(v[0])
		slices.Sort(v[1])
		out[name] = [2]float64{pctMs(v[0], 99), pctMs(v[1], 99)}
	}
	return out
}

// bootstrapRatio is the 95 % interval of the pooled p99 ratio (hostile
// rounds over quiet ones) over n resamplings of each kind's rounds.
func bootstrapRatio(rounds []fairRound, n int, rng *rand.Rand) [2]float64 {
	var q, h []fairRound
	for _, r := range rounds {
		if r.Hostile {
			h = append(h, r)
		} else {
			q = append(q, r)
		}
	}
	if len(q) == 0 || len(h) == 0 {
		return [2]float64{}
	}
	resample := func(v []fairRound) []fairRound {
		out := make([]fairRound, len(v))
		for i := range out {
			out[i] = v[rng.IntN(len(v))]
		}
		return out
	}
	ratios := make([]float64, 0, n)
	for range n {
		if d := pooledP99(resample(q)); d > 0 {
			ratios = append(ratios, pooledP99(resample(h))/d)
		}
	}
	if len(ratios) == 0 {
		return [2]float64{}
	}
	sort.Float64s(ratios)
	return [2]float64{ratios[len(ratios)*25/1000], ratios[min(len(ratios)*975/1000, len(ratios)-1)]}
}

func fairRoundRun(ctx context.Context, client *http.Client, o fairOptions, h hostileAgent, withHostile bool) fairRound {
	ctx, cancel := context.WithTimeout(ctx, o.round)
	defer cancel()
	srv0, load0, host0 := procCPUSeconds(o.serverPID), cpuSeconds(), h.cpuSeconds()
	var hostileDone func() (map[string]map[string]int64, error)
	if withHostile {
		hostileDone = h.round(ctx, o.round)
	}
	bodies := []struct{ name, path, body string }{
		{"calculator", "/v1/call", `{"tool":"calculator","arguments":{"expression":"(12.5 + 7) * 3"}}`},
		{"read-file", "/v1/call", fmt.Sprintf(`{"tool":"read-file","arguments":{"space":%q,"path":%q}}`, o.readSpace, o.readPath)},
		{"select", "/v1/select", `{"text":"what is 12 times 7"}`},
	}
	var mu sync.Mutex
	var lat []time.Duration
	r := fairRound{Hostile: withHostile, Errors: map[string]int64{}, byKind: map[string][]time.Duration{}}
	var wg sync.WaitGroup
	for c := 0; c < o.quietClients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := c; ctx.Err() == nil; i++ {
				b := bodies[i%len(bodies)]
				t0 := time.Now()
				status, err := post(context.Background(), client, o.base+b.path, o.quietTok, []byte(b.body))
				d := time.Since(t0)
				if ctx.Err() != nil && t0.Add(d).After(deadlineOf(ctx)) {
					break // ended after the round: not counted
				}
				mu.Lock()
				r.Calls++
				lat = append(lat, d)
				r.byKind[b.name] = append(r.byKind[b.name], d)
				switch {
				case err != nil:
					r.Errors["transport"]++
				case status == 200:
					r.OK++
				default:
					r.Errors[fmt.Sprint(status)]++
				}
				mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(o.pause):
				}
			}
		}(c)
	}
	wg.Wait()
	if withHostile {
		r.HostileStatuses, r.hostileErr = hostileDone()
	}
	r.ServerCPUs, r.LoadCPUs = procCPUSeconds(o.serverPID)-srv0, cpuSeconds()-load0
	if o.hostileProcess {
		r.HostileLoadCPUs = h.cpuSeconds() - host0
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	r.P50ms, r.P99ms = pctMs(lat, 50), pctMs(lat, 99)
	r.lat = lat
	if len(r.Errors) == 0 {
		r.Errors = nil
	}
	return r
}

// procCPUSeconds is process pid's CPU time (user + system) from
// /proc/PID/stat; 0 when pid is 0 or the file cannot be read.
func procCPUSeconds(pid int) float64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) in parentheses:
	// utime and stime are the 12th and 13th, in clock ticks (100 a second
	// on Linux).
	_, rest, ok := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

func pctMs(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*p/100), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

func summarize(rounds []fairRound, hostile bool) fairSummary {
	var p50, p99 []float64
	var s fairSummary
	var kind []fairRound
	ok := 0
	for _, r := range rounds {
		if r.Hostile != hostile {
			continue
		}
		kind = append(kind, r)
		s.Rounds++
		s.Calls += r.Calls
		ok += r.OK
		p50, p99 = append(p50, r.P50ms), append(p99, r.P99ms)
	}
	s.P50ms, s.P99ms = median(p50), median(p99)
	s.PooledP99ms = pooledP99(kind)
	if s.Calls > 0 {
		s.Success = float64(ok) / float64(s.Calls)
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// post sends body and drains the answer; it returns the status.
func post(ctx context.Context, client *http.Client, url, token string, body []byte) (int, error) {
	st, _, err := postH(ctx, client, url, token, body)
	return st, err
}

// postH is post that also returns the answer's Retry-After, in seconds (0: none).
func postH(ctx context.Context, client *http.Client, url, token string, body []byte) (int, int, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	return resp.StatusCode, ra, nil
}

// hostile is the hostile agent: one client per abuse, each in a loop
// for the round, never waiting for a Retry-After.
type hostile struct {
	o       fairOptions
	client  *http.Client
	compare []byte
	sel     []byte
	plan    []byte
	n       atomic.Int64 // held calls' path counter: every delete is new

	mu sync.Mutex
	by map[string]map[string]int64
}

func newHostile(o fairOptions) *hostile {
	r := rand.New(rand.NewPCG(7, 11))
	lines := func(n int) string { // Myers' worst case: short lines of a small alphabet
		var sb strings.Builder
		for sb.Len() < n-2 {
			sb.WriteByte(byte('a' + r.IntN(3)))
			sb.WriteByte('\n')
		}
		return sb.String()
	}
	words := func(n int, sep string) string {
		vocab := []string{"read", "the", "file", "compare", "two", "texts", "summarize", "report", "delete", "old", "logs", "calculate", "sum", "of", "numbers", "and"}
		var sb strings.Builder
		for sb.Len() < n-12 {
			if sb.Len() > 0 {
				sb.WriteString(sep)
			}
			sb.WriteString(vocab[r.IntN(len(vocab))])
		}
		return sb.String()
	}
	cmp, _ := json.Marshal(map[string]any{"tool": "compare", "arguments": map[string]string{"a": lines(o.compareText), "b": lines(o.compareText)}, "timeout_ms": 60})
	sel, _ := json.Marshal(map[string]string{"text": words(o.selectText, " ")})
	plan, _ := json.Marshal(map[string]string{"text": words(o.planText, " ")})
	return &hostile{o: o, compare: cmp, sel: sel, plan: plan,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 60 * time.Second}}
}

func (h *hostile) reset() {
	h.mu.Lock()
	h.by = map[string]map[string]int64{}
	h.mu.Unlock()
}

func (h *hostile) count(abuse, status string) {
	h.mu.Lock()
	m := h.by[abuse]
	if m == nil {
		m = map[string]int64{}
		h.by[abuse] = m
	}
	m[status]++
	h.mu.Unlock()
}

func (h *hostile) statuses() map[string]map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.by
}

// abuseNames are the hostile agent's abuses, one client each.
var abuseNames = []string{"own_timeouts", "huge_select", "huge_plan", "abandoned_select", "abandoned_plan", "held_deletes"}

func (h *hostile) start(ctx context.Context, wg *sync.WaitGroup) {
	loop := func(abuse string, one func() (string, int)) {
		if h.o.abuses != nil && !h.o.abuses[abuse] {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				st, retryAfter := one()
				if ctx.Err() == nil {
					h.count(abuse, st)
				}
				wait := h.o.hostilePause
				if h.o.honorRetryAfter && (st == "429" || st == "503") {
					wait = max(wait, time.Duration(retryAfter)*time.Second)
				}
				if wait > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(wait):
					}
				}
			}
		}()
	}
	status := func(st, retryAfter int, err error) (string, int) {
		if err != nil {
			return "transport", 0
		}
		return fmt.Sprint(st), retryAfter
	}
	loop("own_timeouts", func() (string, int) {
		return status(postH(ctx, h.client, h.o.base+"/v1/call", h.o.hostileTok, h.compare))
	})
	loop("huge_select", func() (string, int) {
		return status(postH(ctx, h.client, h.o.base+"/v1/select", h.o.hostileTok, h.sel))
	})
	loop("huge_plan", func() (string, int) {
		return status(postH(ctx, h.client, h.o.base+"/v1/plan", h.o.hostileTok, h.plan))
	})
	abandon := func(path string, body []byte) (string, int) {
		actx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		st, ra, err := postH(actx, h.client, h.o.base+path, h.o.hostileTok, body)
		if err != nil && actx.Err() != nil {
			return "left", 0
		}
		return status(st, ra, err)
	}
	loop("abandoned_select", func() (string, int) { return abandon("/v1/select", h.sel) })
	loop("abandoned_plan", func() (string, int) { return abandon("/v1/plan", h.plan) })
	loop("held_deletes", func() (string, int) {
		p := fmt.Sprintf("held/%s-%d.txt", strings.Repeat("x", 1000), h.n.Add(1))
		b, _ := json.Marshal(map[string]any{"tool": "delete-file", "arguments": map[string]string{"space": h.o.writeSpace, "path": p}})
		return status(postH(ctx, h.client, h.o.base+"/v1/call", h.o.hostileTok, b))
	})
}

func printFairness(w io.Writer, r fairResult) {
	fmt.Fprintf(w, "| rounds | quiet agent's calls | success | p50 (median of rounds) | p99 (median of rounds) | p99 (pooled) |\n|---|---:|---:|---:|---:|---:|\n")
	beside := "beside the hostile agent"
	if r.Idle {
		beside = "beside the idle agent"
	}
	for _, s := range []struct {
		name string
		s    fairSummary
	}{{"quiet (alone)", r.Quiet}, {beside, r.WithHostile}} {
		fmt.Fprintf(w, "| %s ×%d | %d | %.2f%% | %.2f ms | %.2f ms | %.2f ms |\n", s.name, s.s.Rounds, s.s.Calls, 100*s.s.Success, s.s.P50ms, s.s.P99ms, s.s.PooledP99ms)
	}
	fmt.Fprintf(w, "\np99 ratio (with hostile / quiet): median of rounds %.2f; pooled %.2f, 95%% bootstrap interval %.2f–%.2f\n", r.P99Ratio, r.PooledRatio, r.PooledCI[0], r.PooledCI[1])
	names := slices.Sorted(maps.Keys(r.PooledP99ByCall))
	fmt.Fprintf(w, "pooled p99 by call, alone → beside:")
	for _, n := range names {
		v := r.PooledP99ByCall[n]
		fmt.Fprintf(w, " %s %.2f → %.2f ms;", n, v[0], v[1])
	}
	fmt.Fprintf(w, "\n\nper round (p99 ms, server CPU s, quiet load generator CPU s, hostile's process CPU s):")
	for _, x := range r.Rounds {
		k := "Q"
		if x.Hostile {
			k = "H"
		}
		fmt.Fprintf(w, " %s %.1f/%.2f/%.2f/%.2f", k, x.P99ms, x.ServerCPUs, x.LoadCPUs, x.HostileLoadCPUs)
	}
	fmt.Fprintln(w)
	all := map[string]map[string]int64{}
	quietErrs := map[string]int64{}
	for _, x := range r.Rounds {
		for abuse, m := range x.HostileStatuses {
			if all[abuse] == nil {
				all[abuse] = map[string]int64{}
			}
			for st, n := range m {
				all[abuse][st] += n
			}
		}
		for st, n := range x.Errors {
			quietErrs[st] += n
		}
	}
	b, _ := json.Marshal(all)
	fmt.Fprintf(w, "hostile agent's statuses, all hostile rounds: %s\n", b)
	b, _ = json.Marshal(quietErrs)
	fmt.Fprintf(w, "quiet agent's errors, all rounds: %s\n", b)
}
