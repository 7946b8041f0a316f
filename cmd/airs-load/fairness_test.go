package main

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestFairnessRoundsAndCounts: against a fake server, rounds alternate in
// pairs (QH, HQ, …); the quiet agent's calls are counted per round with
// its non-200s as errors; the hostile agent runs only in its rounds, with
// every abuse, and its answers are counted per abuse; the summary is the
// medians of the rounds of each kind.
func TestFairnessRoundsAndCounts(t *testing.T) {
	t.Run("hostile agent in this process", func(t *testing.T) { testFairnessRoundsAndCounts(t, false) })
	t.Run("hostile agent in its own process", func(t *testing.T) { testFairnessRoundsAndCounts(t, true) })
}

// TestMain lets this test binary be the hostile agent's process, as
// airs-load is when it starts itself with fairness-hostile.
func TestMain(m *testing.M) {
	if os.Getenv(hostileRoleEnv) == "fairness-hostile" {
		os.Exit(runHostileChild(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

func testFairnessRoundsAndCounts(t *testing.T, ownProcess bool) {
	var mu sync.Mutex
	hostileSeen := map[string]bool{}
	quietReads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Tool string `json:"tool"`
			Text string `json:"text"`
		}
		_ = json.Unmarshal(body, &req)
		switch r.Header.Get("Authorization") {
		case "Bearer q":
			mu.Lock()
			if req.Tool == "read-file" {
				quietReads++
				mu.Unlock()
				w.WriteHeader(http.StatusServiceUnavailable) // one kind of the quiet agent's calls fails
				return
			}
			mu.Unlock()
		case "Bearer h":
			mu.Lock()
			hostileSeen[r.URL.Path+" "+req.Tool] = true
			mu.Unlock()
			if r.URL.Path == "/v1/select" { // slower than an abandoning client waits
				select {
				case <-r.Context().Done():
					return
				case <-time.After(400 * time.Millisecond):
				}
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		default:
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	o := fairOptions{base: srv.URL, quietTok: "q", hostileTok: "h", readSpace: "docs", readPath: "a.txt", writeSpace: "scratch",
		round: time.Second, pause: time.Millisecond, quietClients: 2, selectText: 2000, planText: 1000, compareText: 1000,
		hostileProcess: ownProcess}
	res, err := fairness(context.Background(), o, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rounds) != 4 {
		t.Fatalf("%d rounds, want 4", len(res.Rounds))
	}
	for i, want := range []bool{false, true, true, false} {
		if res.Rounds[i].Hostile != want {
			t.Errorf("round %d hostile=%v, want %v (pairs in alternating order)", i, res.Rounds[i].Hostile, want)
		}
	}
	for i, r := range res.Rounds {
		if r.Calls == 0 || r.OK == 0 || r.Errors["503"] == 0 || r.OK+int(r.Errors["503"]) != r.Calls {
			t.Errorf("round %d: %d calls, %d ok, errors %v: want the read-file 503s counted as errors, the rest ok", i, r.Calls, r.OK, r.Errors)
		}
		if r.Hostile != (r.HostileStatuses != nil) {
			t.Errorf("round %d (hostile=%v): hostile statuses %v", i, r.Hostile, r.HostileStatuses)
		}
	}
	hs := res.Rounds[1].HostileStatuses
	for _, abuse := range abuseNames {
		if len(hs[abuse]) == 0 {
			t.Errorf("abuse %s made no request: %v", abuse, hs)
		}
	}
	if hs["own_timeouts"]["429"] == 0 {
		t.Errorf("own_timeouts' 429s not counted: %v", hs)
	}
	if hs["abandoned_select"]["left"] == 0 || hs["huge_select"]["429"] == 0 {
		t.Errorf("abandoned selects not counted as left, or waited-for ones not as their status: %v", hs)
	}
	for _, k := range []string{"/v1/call compare", "/v1/call delete-file", "/v1/plan "} {
		if !hostileSeen[k] {
			t.Errorf("the hostile agent never sent %q (saw %v)", k, hostileSeen)
		}
	}
	if res.Quiet.Rounds != 2 || res.WithHostile.Rounds != 2 || res.Quiet.Success <= 0 || res.Quiet.Success >= 1 {
		t.Errorf("summaries %+v %+v", res.Quiet, res.WithHostile)
	}
	if quietReads == 0 {
		t.Error("the quiet agent never read a file")
	}
	for _, k := range []string{"calculator", "read-file", "select"} {
		if v := res.PooledP99ByCall[k]; v[0] <= 0 || v[1] <= 0 {
			t.Errorf("pooled p99 of %s alone and beside: %v", k, v)
		}
	}
	var out strings.Builder
	printFairness(&out, res)
	if !strings.Contains(out.String(), "beside the hostile agent ×2") || !strings.Contains(out.String(), "p99 ratio") {
		t.Errorf("table:\n%s", out.String())
	}
}

// TestFairnessHonoursRetryAfter: with -hostile-retry-after an abuse
// answered 429 waits the Retry-After before asking again; without it,
// it asks again at once.
func TestFairnessHonoursRetryAfter(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Authorization") == "Bearer h" {
			mu.Lock()
			n++
			mu.Unlock()
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	count := func(honour bool) int {
		mu.Lock()
		n = 0
		mu.Unlock()
		o := fairOptions{base: srv.URL, quietTok: "q", hostileTok: "h", round: 200 * time.Millisecond, pause: time.Millisecond,
			quietClients: 1, selectText: 100, planText: 100, compareText: 100, honorRetryAfter: honour,
			abuses: map[string]bool{"huge_plan": true}}
		if _, err := fairness(context.Background(), o, 1); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return n
	}
	if got := count(true); got != 1 {
		t.Errorf("honouring Retry-After: %d requests in the round, want 1 (the next one 60 s later)", got)
	}
	if got := count(false); got < 2 {
		t.Errorf("a flood: %d requests in the round, want it to ask again at once", got)
	}
}

// The pooled p99 ratio's bootstrap interval holds the ratio the rounds
// were made with, and is narrow when the rounds agree.
func TestPooledRatioInterval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	round := func(hostile bool, scale float64) fairRound {
		lat := make([]time.Duration, 500)
		for i := range lat {
			lat[i] = time.Duration(scale * float64(time.Millisecond) * (1 + rng.ExpFloat64()))
		}
		slices.Sort(lat)
		return fairRound{Hostile: hostile, lat: lat}
	}
	var rounds []fairRound
	for range 8 {
		rounds = append(rounds, round(false, 1), round(true, 2))
	}
	ci := bootstrapRatio(rounds, 500, rand.New(rand.NewPCG(1, 2)))
	if !(ci[0] < 2 && 2 < ci[1]) || ci[1]-ci[0] > 1 {
		t.Fatalf("interval %v, want one around 2", ci)
	}
	if r := pooledP99(rounds[1:2]) / pooledP99(rounds[0:1]); r < 1.5 || r > 2.5 {
		t.Errorf("one pair's ratio %.2f", r)
	}
}

// TestHostileProcess: the hostile agent's own process makes its requests
// and reports what it got, round after round, and ends when told.
func TestHostileProcess(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Authorization") == "Bearer h" && r.URL.Path == "/v1/plan" {
			mu.Lock()
			n++
			mu.Unlock()
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer srv.Close()
	o := fairOptions{base: srv.URL, hostileTok: "h", selectText: 100, planText: 100, compareText: 100,
		abuses: map[string]bool{"huge_plan": true}}
	p, err := startHostileProcess(o)
	if err != nil {
		t.Fatal(err)
	}
	if p.cmd.Process.Pid == os.Getpid() {
		t.Fatal("the hostile agent runs in this process")
	}
	for round := range 2 {
		mu.Lock()
		n = 0
		mu.Unlock()
		st, err := p.round(context.Background(), 200*time.Millisecond)()
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := n
		mu.Unlock()
		if len(st) != 1 || st["huge_plan"]["429"] == 0 || st["huge_plan"]["429"] > int64(got) {
			t.Errorf("round %d: statuses %v, the server saw %d plans", round, st, got)
		}
	}
	p.close()
	if p.cmd.ProcessState == nil || !p.cmd.ProcessState.Success() {
		t.Errorf("the hostile agent's process did not end cleanly: %v", p.cmd.ProcessState)
	}
}
