package main

// `airs-load spread` drives several `airs serve` replicas at once, as
// clients behind a load balancer would: client i starts on replica
// i mod N; every logical call carries a call_id of its own, and a call
// that gets no answer (connection refused, reset or cut) is retried on
// the next replica with the same call_id, so the audit log can tell a
// retried call from a new one. A client stays on the replica that last
// answered it.
//
// It reports, besides throughput and latency, how many calls were
// acknowledged (a 200 with outcome ok) and how many needed a retry, and
// writes the acknowledged call ids to -acked, one a line. `airs-load
// check` compares that file with the call ids of the audit log.
//
// Dedupe is the server's: replicas on PostgreSQL claim a non-idempotent
// call's id before running it (pipeline.CallClaims), so a retry of a call
// whose replica died after claiming it is answered 409 already_claimed
// (counted as claimed_earlier). An idempotent tool is not claimed: its
// retries may run again, harmlessly. `check` counts every id recorded as
// run more than once, whatever the tool.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// spreadResult is spread's JSON line.
type spreadResult struct {
	Replicas     int     `json:"replicas"`
	Clients      int     `json:"clients"`
	Seconds      float64 `json:"seconds"`
	Acknowledged int64   `json:"acknowledged"`
	Errors       int64   `json:"errors"`
	Retried      int64   `json:"retried"`
	// ClaimedEarlier: retries answered 409 already_claimed — an earlier
	// attempt of the call (whose answer was lost with its replica) claimed
	// it, so it was not run twice. Neither acknowledged nor an error: the
	// audit log says whether that attempt finished.
	ClaimedEarlier int64 `json:"claimed_earlier"`
	// Replayed: retries answered 200 with "replayed": true — the first
	// attempt had ended (its answer lost with its replica) and the retry got
	// its outcome without running it again. Acknowledged; the audit log has
	// the first attempt's record (and one marked replayed).
	Replayed   int64            `json:"replayed"`
	RPS        float64          `json:"rps"`
	P50ms      float64          `json:"p50_ms"`
	P99ms      float64          `json:"p99_ms"`
	PerReplica []int64          `json:"per_replica"`
	Statuses   map[string]int64 `json:"statuses"`
	FirstError string           `json:"first_error,omitempty"`
	// CPUSeconds is this load generator's own CPU time (user + system)
	// during the run: on one machine it shares the cores with what it
	// loads, and scale-out.sh counts it apart.
	CPUSeconds float64 `json:"cpu_s"`
}

// cpuSeconds is the process's CPU time so far (0 where unknown).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// attemptResult is one POST's outcome: ok (acknowledged), retry (no
// answer from this replica: try another), or a final refusal.
type attemptResult int

const (
	attemptOK attemptResult = iota
	attemptRetry
	attemptRefused
	attemptClaimed  // 409 already_claimed: an earlier attempt still runs (or died mid-call)
	attemptReplayed // 200 "replayed": the first attempt's outcome, ok
)

func runSpread(args []string) int {
	fs := flag.NewFlagSet("spread", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: airs-load spread -urls URL1,URL2,… [flags]

Spreads C clients over the replicas' /v1/call for D; a call that gets no
answer is retried on the next replica with the same call_id. Prints one
JSON line (acknowledged, retried, errors, rps, per_replica); exit 1 when a
call was refused or failed on every replica.

Flags:
`)
		fs.PrintDefaults()
	}
	urls := fs.String("urls", "", "comma-separated /v1/call endpoints, one per replica (required)")
	token := fs.String("token", os.Getenv("AIRS_TOKEN"), "bearer token (default $AIRS_TOKEN)")
	conc := fs.Int("c", 30, "concurrent clients")
	dur := fs.Duration("d", 10*time.Second, "duration")
	body := fs.String("body", `{"tool":"calculator","arguments":{"expression":"1+2"}}`, "request body (a JSON object; call_id is set per call)")
	acked := fs.String("acked", "", "write the acknowledged call ids here, one a line")
	_ = fs.Parse(args)
	var bases []string
	for _, u := range strings.Split(*urls, ",") {
		if u = strings.TrimSpace(u); u != "" {
			bases = append(bases, u)
		}
	}
	if len(bases) == 0 {
		fmt.Fprintln(os.Stderr, "airs-load spread: -urls is required: the replicas' /v1/call URLs, comma-separated, e.g. -urls http://127.0.0.1:7001/v1/call,http://127.0.0.1:7002/v1/call")
		return 2
	}
	var tmpl map[string]json.RawMessage
	if err := json.Unmarshal([]byte(*body), &tmpl); err != nil {
		fmt.Fprintf(os.Stderr, "airs-load spread: -body must be a JSON object like {\"tool\":\"calculator\",\"arguments\":{…}}: %v\n", err)
		return 2
	}
	res, ids := spread(context.Background(), bases, *token, *conc, *dur, tmpl)
	if *acked != "" {
		if err := writeLines(*acked, ids); err != nil {
			fmt.Fprintf(os.Stderr, "airs-load spread: writing -acked: %v\n", err)
			return 1
		}
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if res.Errors > 0 {
		return 1
	}
	return 0
}

// spread runs the load and returns its result and the acknowledged ids.
func spread(ctx context.Context, bases []string, token string, conc int, dur time.Duration, tmpl map[string]json.RawMessage) (spreadResult, []string) {
	tr := &http.Transport{MaxIdleConns: conc, MaxIdleConnsPerHost: conc, MaxConnsPerHost: conc}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()

	prefix := make([]byte, 6)
	_, _ = rand.Read(prefix)
	var seq atomic.Int64
	var ok, failed, retried, claimed, replayed atomic.Int64
	per := make([]atomic.Int64, len(bases))
	var mu sync.Mutex
	statuses := map[string]int64{}
	var firstErr string
	note := func(status string, err string) {
		mu.Lock()
		statuses[status]++
		if err != "" && firstErr == "" {
			firstErr = err
		}
		mu.Unlock()
	}
	lat := make([][]time.Duration, conc)
	ids := make([][]string, conc)
	var wg sync.WaitGroup
	cpu0 := cpuSeconds()
	start := time.Now()
	for i := range conc {
		wg.Go(func() {
			at := i % len(bases)
			for ctx.Err() == nil {
				id := fmt.Sprintf("load-%x-%d", prefix, seq.Add(1))
				b := withCallID(tmpl, id)
				t0 := time.Now()
				var r attemptResult
				var why string
				for try := 0; try < len(bases); try++ {
					if try > 0 {
						retried.Add(1)
						at = (at + 1) % len(bases)
					}
					var status string
					r, status, why = attempt(ctx, client, bases[at], token, b)
					if r != attemptOK && r != attemptReplayed && ctx.Err() != nil {
						return // the run ended during the call: neither counted
					}
					note(status, why)
					if r != attemptRetry {
						break
					}
				}
				switch r {
				case attemptClaimed:
					claimed.Add(1)
				case attemptOK, attemptReplayed:
					if r == attemptReplayed {
						replayed.Add(1)
					}
					ok.Add(1)
					per[at].Add(1)
					lat[i] = append(lat[i], time.Since(t0))
					ids[i] = append(ids[i], id)
				default:
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	var allIDs []string
	for i := range conc {
		all = append(all, lat[i]...)
		allIDs = append(allIDs, ids[i]...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[min(len(all)-1, int(float64(len(all))*p/100))].Microseconds()) / 1000
	}
	res := spreadResult{Replicas: len(bases), Clients: conc, Seconds: elapsed.Seconds(), Acknowledged: ok.Load(),
		Errors: failed.Load(), Retried: retried.Load(), ClaimedEarlier: claimed.Load(), Replayed: replayed.Load(), RPS: float64(ok.Load()) / elapsed.Seconds(),
		P50ms: pct(50), P99ms: pct(99), Statuses: statuses, FirstError: firstErr, CPUSeconds: cpuSeconds() - cpu0}
	for i := range per {
		res.PerReplica = append(res.PerReplica, per[i].Load())
	}
	return res, allIDs
}

// withCallID is the request body with call_id set.
func withCallID(tmpl map[string]json.RawMessage, id string) []byte {
	m := make(map[string]json.RawMessage, len(tmpl)+1)
	for k, v := range tmpl {
		m[k] = v
	}
	m["call_id"], _ = json.Marshal(id)
	b, _ := json.Marshal(m)
	return b
}

// attempt POSTs one call to one replica. No answer (a transport error:
// refused, reset, cut mid-answer) is attemptRetry: the replica is gone and
// another may answer. Any HTTP status is the call's answer, 5xx included
// — a 504 or 502 says the call was dispatched and may have run, and AIRS
// retries nothing automatically (tools say whether they are idempotent,
// callers decide) — so it is final: a refusal unless 200 with outcome ok.
func attempt(ctx context.Context, client *http.Client, url, token string, body []byte) (attemptResult, string, string) {
	req, _ := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return attemptRetry, "no_answer", err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	status := fmt.Sprint(resp.StatusCode)
	if err != nil {
		return attemptRetry, "no_answer", err.Error() // cut off mid-answer: not acknowledged
	}
	var res struct {
		Outcome  string `json:"outcome"`
		Replayed bool   `json:"replayed"`
	}
	if resp.StatusCode == http.StatusConflict && bytes.Contains(data, []byte(`"already_claimed"`)) {
		return attemptClaimed, status, ""
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(data, &res) != nil || res.Outcome != "ok" {
		return attemptRefused, status, fmt.Sprintf("%s: HTTP %d: %s", url, resp.StatusCode, bytes.TrimSpace(data))
	}
	if res.Replayed {
		return attemptReplayed, status, ""
	}
	return attemptOK, status, ""
}

func writeLines(path string, lines []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return errors.Join(w.Flush(), f.Close())
}

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}

// checkResult is check's JSON line.
type checkResult struct {
	Acknowledged int `json:"acknowledged"`
	InAudit      int `json:"in_audit"`   // acknowledged ids with a record
	Lost         int `json:"lost"`       // acknowledged ids without one
	Duplicated   int `json:"duplicated"` // ids (of this run) with more than one record
	Unacked      int `json:"unacked_in_audit"`
}

// runPrefix is the part of a spread call id that names its run
// ("load-HEX-" of "load-HEX-N"), "" for an id spread did not make.
func runPrefix(id string) string {
	i := strings.LastIndexByte(id, '-')
	if !strings.HasPrefix(id, "load-") || i < len("load-") {
		return ""
	}
	return id[:i+1]
}

// check compares acknowledged ids with the audit log's call ids (one per
// record, repeated when recorded twice), counting only the ids of the
// runs that acknowledged them (same "load-HEX-" prefix): other runs' and
// other clients' records are not this run's business.
func check(acked, audit []string) checkResult {
	count := map[string]int{}
	for _, id := range audit {
		count[id]++
	}
	res := checkResult{Acknowledged: len(acked)}
	ackSet := map[string]bool{}
	runs := map[string]bool{}
	for _, id := range acked {
		ackSet[id] = true
		if p := runPrefix(id); p != "" {
			runs[p] = true
		}
		if count[id] > 0 {
			res.InAudit++
		} else {
			res.Lost++
		}
	}
	for id, n := range count {
		if !ackSet[id] && !runs[runPrefix(id)] {
			continue
		}
		if n > 1 {
			res.Duplicated++
		}
		if !ackSet[id] {
			res.Unacked++
		}
	}
	return res
}

func runCheck(args []string) int {
	fs := flag.NewFlagSet("check", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), `usage: airs-load check -acked FILE -audit FILE

Compares the call ids spread acknowledged (-acked) with the audit log's
(-audit: one call id per record, e.g. psql -Atc "SELECT line::json->>'call_id'
FROM airs_audit"). Prints {acknowledged, in_audit, lost, duplicated,
unacked_in_audit}; exit 1 when an acknowledged call is lost or a call is
recorded twice.

Flags:
`)
		fs.PrintDefaults()
	}
	ackedPath := fs.String("acked", "", "acknowledged call ids (spread -acked)")
	auditPath := fs.String("audit", "", "the audit log's call ids, one per record")
	_ = fs.Parse(args)
	if *ackedPath == "" || *auditPath == "" {
		fmt.Fprintln(os.Stderr, "airs-load check: -acked and -audit are both required (see -h)")
		return 2
	}
	acked, err := readLines(*ackedPath)
	if err == nil {
		var audit []string
		if audit, err = readLines(*auditPath); err == nil {
			res := check(acked, audit)
			b, _ := json.Marshal(res)
			fmt.Println(string(b))
			if res.Lost > 0 || res.Duplicated > 0 {
				return 1
			}
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "airs-load check: %v\n", err)
	return 1
}
