package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const sseUsage = `Usage:
  airs-load sse -url STREAM -token T [-signin URL] [-c 100] [-stall 5] [-d 30s]
                [-calls URL -calls-rate 25 -calls-body JSON]
                [-context URL -files-rate 25 -files-space S -files-n N -files-pattern f%%d.txt] [-json]

Opens C event-stream clients (server-sent events) on STREAM from this process,
plus STALL clients that connect and never read, while it drives events: calls
POSTed to -calls at -calls-rate per second, and files named by -files-pattern
(0..N-1, which must exist in the space) reported opened through PUT -context at
-files-rate per second. Every client reconnects when its stream ends (as an
EventSource does) and counts it.

With -signin, each client first POSTs token=T to that URL as a form and uses
the session cookie it gets (the attention UI's stream); else it sends the token
as a bearer header (the API's stream).

It prints: events per client (min, median, max), the delivery latency of each
event that carries its creation time ("created", "at", or a "recommendation"
or "call" object holding one) as p50/p99/max, how many of the events any
client saw each client missed, reconnects, and whether the stalled clients
were cut off by the server. --json prints one JSON line.
`

type sseStats struct {
	mu       sync.Mutex
	lat      []time.Duration
	seen     []map[string]bool // per client: event keys
	union    map[string]time.Time
	connects []int
}

func runSSE(args []string) int {
	fs := flag.NewFlagSet("sse", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintf(os.Stderr, sseUsage); fs.PrintDefaults() }
	stream := fs.String("url", "", "the event stream's URL")
	token := fs.String("token", os.Getenv("AIRS_TOKEN"), "bearer token (default $AIRS_TOKEN)")
	signin := fs.String("signin", "", "sign-in URL: exchange the token for a session cookie first")
	conc := fs.Int("c", 100, "reading clients")
	stall := fs.Int("stall", 0, "clients that connect and never read")
	dur := fs.Duration("d", 30*time.Second, "duration")
	callsURL := fs.String("calls", "", "POST calls here (e.g. BASE/v1/call)")
	callsRate := fs.Float64("calls-rate", 25, "calls per second")
	callsBody := fs.String("calls-body", `{"tool":"calculator","arguments":{"expression":"1+2"}}`, "call body")
	ctxURL := fs.String("context", "", "PUT file openings here (e.g. BASE/v1/context)")
	filesRate := fs.Float64("files-rate", 25, "file openings per second")
	filesSpace := fs.String("files-space", "docs", "the files' space")
	filesN := fs.Int("files-n", 1000, "files named by -files-pattern, 0..N-1")
	filesPattern := fs.String("files-pattern", "f%d.txt", "the files' names")
	asJSON := fs.Bool("json", false, "print one JSON line")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *stream == "" {
		fmt.Fprintln(os.Stderr, "airs-load sse: -url (the stream) is required")
		return 2
	}
	tr := &http.Transport{MaxIdleConnsPerHost: *conc + *stall + 8, MaxConnsPerHost: 0}
	client := &http.Client{Transport: tr}
	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()

	st := &sseStats{union: map[string]time.Time{}, seen: make([]map[string]bool, *conc), connects: make([]int, *conc)}
	for i := range st.seen {
		st.seen[i] = map[string]bool{}
	}
	var wg sync.WaitGroup
	var authFailed atomic.Int64
	for i := 0; i < *conc; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for ctx.Err() == nil {
				req, err := streamRequest(ctx, client, *stream, *token, *signin)
				if err != nil {
					authFailed.Add(1)
					time.Sleep(200 * time.Millisecond)
					continue
				}
				st.mu.Lock()
				st.connects[i]++
				st.mu.Unlock()
				readStream(ctx, client, req, i, st)
			}
		}(i)
	}
	// Stalled clients: a raw connection that sends the request and never reads.
	var stalled []net.Conn
	u, _ := url.Parse(*stream)
	for range *stall {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			continue
		}
		_ = c.(*net.TCPConn).SetReadBuffer(4096)
		hdr := "Authorization: Bearer " + *token + "\r\n"
		if *signin != "" {
			if ck, err := signIn(client, *signin, *token); err == nil {
				hdr = "Cookie: " + ck + "\r\n"
			}
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", u.RequestURI(), u.Host, hdr)
		stalled = append(stalled, c)
	}

	time.Sleep(500 * time.Millisecond) // let the clients connect before events flow
	// The drivers stop a second before the readers do, so that an event made
	// at the very end has time to reach every client: what is missed is
	// missed, not in flight.
	dctx, dcancel := context.WithTimeout(ctx, max(*dur-1500*time.Millisecond, time.Second))
	defer dcancel()
	var calls, callErrs, touches, touchErrs atomic.Int64
	drive := func(rate float64, fn func(n int)) {
		if rate <= 0 {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Duration(float64(time.Second) / rate))
			defer t.Stop()
			for n := 0; ; n++ {
				select {
				case <-dctx.Done():
					return
				case <-t.C:
					go fn(n)
				}
			}
		}()
	}
	if *callsURL != "" {
		drive(*callsRate, func(int) {
			if send(dctx, client, "POST", *callsURL, *token, *callsBody) {
				calls.Add(1)
			} else if dctx.Err() == nil {
				callErrs.Add(1)
			}
		})
	}
	if *ctxURL != "" {
		drive(*filesRate, func(n int) {
			body := fmt.Sprintf(`{"files":[{"space":%q,"path":%q}]}`, *filesSpace, fmt.Sprintf(*filesPattern, n%*filesN))
			if send(dctx, client, "PUT", *ctxURL, *token, body) {
				touches.Add(1)
			} else if dctx.Err() == nil {
				touchErrs.Add(1)
			}
		})
	}
	<-ctx.Done()
	wg.Wait()

	cut := 0
	for _, c := range stalled {
		// Drain what the server sent before giving up on us: a connection
		// the server cut off ends in EOF (or a reset) once drained.
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := io.Copy(io.Discard, c); err == nil || !isTimeout(err) {
			cut++
		}
		c.Close()
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	sort.Slice(st.lat, func(i, j int) bool { return st.lat[i] < st.lat[j] })
	pct := func(p float64) float64 {
		if len(st.lat) == 0 {
			return 0
		}
		k := min(int(float64(len(st.lat))*p/100), len(st.lat)-1)
		return float64(st.lat[k].Microseconds()) / 1000
	}
	var per []int
	missed, reconnects := 0, 0
	for i, s := range st.seen {
		per = append(per, len(s))
		for k := range st.union {
			if !s[k] {
				missed++
			}
		}
		reconnects += max(st.connects[i]-1, 0)
	}
	sort.Ints(per)
	out := map[string]any{
		"clients": *conc, "stalled": *stall, "stalled_cut_off": cut, "seconds": dur.Seconds(),
		"events": len(st.union), "per_client_min": at(per, 0), "per_client_median": at(per, len(per)/2), "per_client_max": at(per, len(per)-1),
		"missed": missed, "reconnects": reconnects, "latency_samples": len(st.lat),
		"p50_ms": pct(50), "p99_ms": pct(99), "max_ms": pct(100),
		"calls": calls.Load(), "call_errors": callErrs.Load(), "touches": touches.Load(), "touch_errors": touchErrs.Load(),
		"sign_in_errors": authFailed.Load(),
	}
	if *asJSON {
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	} else {
		fmt.Printf("%d clients (+%d stalled, %d cut off), %s: %d distinct events; per client min %d median %d max %d; missed %d; reconnects %d; latency p50 %.1f ms p99 %.1f ms max %.1f ms (%d samples); calls %d (%d errors), files %d (%d errors)\n",
			*conc, *stall, cut, *dur, len(st.union), at(per, 0), at(per, len(per)/2), at(per, len(per)-1), missed, reconnects,
			pct(50), pct(99), pct(100), len(st.lat), calls.Load(), callErrs.Load(), touches.Load(), touchErrs.Load())
	}
	if callErrs.Load()+touchErrs.Load() > 0 {
		return 1
	}
	return 0
}

func at(s []int, i int) int {
	if i < 0 || i >= len(s) {
		return 0
	}
	return s[i]
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func streamRequest(ctx context.Context, client *http.Client, stream, token, signin string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", stream, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if signin == "" {
		req.Header.Set("Authorization", "Bearer "+token)
		return req, nil
	}
	ck, err := signIn(client, signin, token)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Cookie", ck)
	return req, nil
}

// signIn posts the token to the sign-in form and returns the Cookie header
// value of the session it sets.
func signIn(client *http.Client, signin, token string) (string, error) {
	u, _ := url.Parse(signin)
	req, _ := http.NewRequest("POST", signin, strings.NewReader(url.Values{"token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	var parts []string
	for _, c := range resp.Cookies() {
		parts = append(parts, c.Name+"="+c.Value)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("sign-in answered %d with no cookie", resp.StatusCode)
	}
	return strings.Join(parts, "; "), nil
}

// readStream reads one connection's events until it ends.
func readStream(ctx context.Context, client *http.Client, req *http.Request, i int, st *sseStats) {
	resp, err := client.Do(req)
	if err != nil {
		time.Sleep(100 * time.Millisecond)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		_, _ = io.Copy(io.Discard, resp.Body)
		time.Sleep(200 * time.Millisecond)
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Bytes()
		if e, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
			event = string(e)
			continue
		}
		d, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		now := time.Now()
		if event == "snapshot" {
			// What a snapshot holds is resynced, not missed: a reconnecting
			// client gets the live suggestions and the latest calls this way.
			st.mu.Lock()
			for _, k := range snapshotKeys(d) {
				st.seen[i][k] = true
			}
			st.mu.Unlock()
			continue
		}
		key, ts := eventKey(event, d)
		if key == "" {
			continue
		}
		st.mu.Lock()
		if !st.seen[i][key] {
			st.seen[i][key] = true
			if _, ok := st.union[key]; !ok {
				st.union[key] = now
			}
			if !ts.IsZero() && (event == "new" || event == "call") {
				st.lat = append(st.lat, now.Sub(ts))
			}
		}
		st.mu.Unlock()
	}
	_ = ctx
}

// eventKey names an event for counting across clients, and its creation
// time when it carries one.
func eventKey(event string, data []byte) (string, time.Time) {
	if event == "snapshot" || event == "" {
		return "", time.Time{}
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(data, &v) != nil {
		return "", time.Time{}
	}
	for _, inner := range []string{"recommendation", "call"} {
		if b, ok := v[inner]; ok {
			var w map[string]json.RawMessage
			if json.Unmarshal(b, &w) == nil {
				v = w
			}
		}
	}
	var id string
	for _, k := range []string{"id", "call_id"} {
		if b, ok := v[k]; ok {
			_ = json.Unmarshal(b, &id)
			break
		}
	}
	if id == "" {
		return "", time.Time{}
	}
	var ts time.Time
	for _, k := range []string{"created", "at"} {
		if b, ok := v[k]; ok && json.Unmarshal(b, &ts) == nil {
			break
		}
	}
	return event + ":" + id, ts
}

func send(ctx context.Context, client *http.Client, method, u, token, body string) bool {
	req, _ := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == 200
}

// snapshotKeys are the event keys a snapshot stands for: "new:" of each
// live recommendation, "call:" of each call it lists.
func snapshotKeys(data []byte) []string {
	var v struct {
		Recommendations []struct {
			ID string `json:"id"`
		} `json:"recommendations"`
		Calls []struct {
			CallID string `json:"call_id"`
		} `json:"calls"`
	}
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	var out []string
	for _, r := range v.Recommendations {
		out = append(out, "new:"+r.ID)
	}
	for _, c := range v.Calls {
		out = append(out, "call:"+c.CallID)
	}
	return out
}
