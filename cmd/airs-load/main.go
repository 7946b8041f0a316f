// Command airs-load drives `airs serve` from a separate process: C
// concurrent clients POST the same call for a duration, then it prints
// throughput, errors and latency percentiles (one JSON line with --json).
//
//	airs-load -url http://127.0.0.1:7777/v1/call -token T -c 200 -d 30s \
//	    -body '{"tool":"calculator","arguments":{"expression":"1+2"}}'
//
// `airs-load sse …` holds many event-stream clients open instead and
// measures how fast events reach each of them (sse.go). `airs-load spread`
// spreads the calls over several replicas, retrying a call that gets no
// answer on another with the same call_id, and `airs-load check` compares
// the acknowledged calls with the audit log (spread.go). `airs-load
// fairness` measures a quiet agent's calls with and without a hostile agent
// beside it (fairness.go).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "sse":
			os.Exit(runSSE(os.Args[2:]))
		case "spread": // several replicas, retries (spread.go)
			os.Exit(runSpread(os.Args[2:]))
		case "check": // acknowledged calls against the audit log (spread.go)
			os.Exit(runCheck(os.Args[2:]))
		case "fairness": // a quiet agent beside a hostile one (fairness.go)
			os.Exit(runFairness(os.Args[2:]))
		case "fairness-hostile": // its hostile agent's own process (hostileproc.go)
			os.Exit(runHostileChild(os.Stdin, os.Stdout))
		}
	}
	url := flag.String("url", "http://127.0.0.1:7777/v1/call", "endpoint to POST to")
	token := flag.String("token", os.Getenv("AIRS_TOKEN"), "bearer token (default $AIRS_TOKEN)")
	conc := flag.Int("c", 200, "concurrent clients")
	dur := flag.Duration("d", 30*time.Second, "duration")
	body := flag.String("body", `{"tool":"calculator","arguments":{"expression":"1+2"}}`, "request body")
	asJSON := flag.Bool("json", false, "print one JSON line")
	flag.Parse()

	tr := &http.Transport{MaxIdleConns: *conc, MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()

	var ok, failed atomic.Int64
	statuses := sync.Map{}
	lat := make([][]time.Duration, *conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequest("POST", *url, bytes.NewReader([]byte(*body)))
				req.Header.Set("Authorization", "Bearer "+*token)
				req.Header.Set("Content-Type", "application/json")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failed.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = append(lat[i], time.Since(t0))
				c, _ := statuses.LoadOrStore(resp.StatusCode, new(atomic.Int64))
				c.(*atomic.Int64).Add(1)
				if resp.StatusCode == 200 {
					ok.Add(1)
				} else {
					failed.Add(1)
				}
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return float64(all[int(float64(len(all))*p/100)].Microseconds()) / 1000
	}
	codes := map[string]int64{}
	statuses.Range(func(k, v any) bool { codes[fmt.Sprint(k)] = v.(*atomic.Int64).Load(); return true })
	out := map[string]any{
		"clients": *conc, "seconds": elapsed.Seconds(), "ok": ok.Load(), "errors": failed.Load(),
		"rps": float64(ok.Load()) / elapsed.Seconds(), "p50_ms": pct(50), "p99_ms": pct(99), "max_ms": pct(100 - 1e-9), "statuses": codes,
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	} else {
		fmt.Printf("clients %d, %.1fs: %d ok, %d errors, %.0f req/s, p50 %.2f ms, p99 %.2f ms, statuses %v\n",
			*conc, elapsed.Seconds(), ok.Load(), failed.Load(), out["rps"], pct(50), pct(99), codes)
	}
	if failed.Load() > 0 {
		os.Exit(1)
	}
}
