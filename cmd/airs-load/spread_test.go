package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSpreadRetriesOnAnotherReplica: three "replicas", one not listening
// and one killed mid-run (its listener closed, its connections cut); every
// call still ends acknowledged on a live one, retried with its call_id
// unchanged, and the acknowledged ids are exactly the calls the live
// replicas answered 200.
func TestSpreadRetriesOnAnotherReplica(t *testing.T) {
	var mu sync.Mutex
	answered := map[string]int{} // call_id → 200s sent
	var sawToken atomic.Bool
	handler := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer tok" {
			sawToken.Store(true)
		}
		var req struct {
			CallID string `json:"call_id"`
			Tool   string `json:"tool"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &req) != nil || req.CallID == "" || req.Tool != "calculator" {
			http.Error(w, "bad body "+string(body), http.StatusBadRequest)
			return
		}
		mu.Lock()
		answered[req.CallID]++
		mu.Unlock()
		w.Write([]byte(`{"outcome":"ok","call_id":"` + req.CallID + `"}`))
	}
	live := httptest.NewServer(http.HandlerFunc(handler))
	defer live.Close()
	doomed := httptest.NewServer(http.HandlerFunc(handler))
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + l.Addr().String()
	l.Close()

	go func() {
		time.Sleep(300 * time.Millisecond)
		doomed.CloseClientConnections()
		doomed.Close()
	}()
	tmpl := map[string]json.RawMessage{"tool": json.RawMessage(`"calculator"`), "arguments": json.RawMessage(`{"expression":"1"}`)}
	res, ids := spread(context.Background(), []string{live.URL, doomed.URL, down}, "tok", 6, time.Second, tmpl)
	if !sawToken.Load() {
		t.Error("the bearer token was not sent")
	}
	if res.Errors != 0 || res.Retried == 0 || res.Acknowledged == 0 || int(res.Acknowledged) != len(ids) {
		t.Fatalf("result %+v, %d ids", res, len(ids))
	}
	if res.PerReplica[2] != 0 || res.PerReplica[0] == 0 || res.PerReplica[1] == 0 {
		t.Errorf("per replica %v: want the down one 0, the others > 0", res.PerReplica)
	}
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("id %s acknowledged twice", id)
		}
		seen[id] = true
		if answered[id] == 0 {
			t.Fatalf("id %s acknowledged but no replica answered it", id)
		}
	}
	// The ids answered but not acknowledged can only be calls cut at the
	// end of the run, one per client at most.
	if extra := len(answered) - len(ids); extra < 0 || extra > 6 {
		t.Errorf("%d calls answered, %d acknowledged", len(answered), len(ids))
	}
}

// TestSpreadAnswerIsNotRetried: a 403, and a 504 or 502 (the call was
// dispatched, may have run), are the call's answer, not a replica's
// absence: nothing is retried.
func TestSpreadAnswerIsNotRetried(t *testing.T) {
	for _, code := range []int{http.StatusForbidden, http.StatusGatewayTimeout, http.StatusBadGateway} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":"x"}`, code)
		})
		a, b := httptest.NewServer(h), httptest.NewServer(h)
		res, ids := spread(context.Background(), []string{a.URL, b.URL}, "tok", 1, 200*time.Millisecond, map[string]json.RawMessage{"tool": json.RawMessage(`"x"`)})
		a.Close()
		b.Close()
		if res.Retried != 0 || res.Errors == 0 || len(ids) != 0 || res.Statuses[fmt.Sprint(code)] == 0 {
			t.Fatalf("HTTP %d: result %+v", code, res)
		}
	}
}

func TestCheck(t *testing.T) {
	acked := []string{"load-a-1", "load-a-2", "load-a-3"}
	// other and load-b-* are not this run's: neither counted.
	audit := []string{"load-a-1", "other", "load-a-2", "load-a-2", "load-a-9", "load-b-1", "load-b-1"}
	got := check(acked, audit)
	want := checkResult{Acknowledged: 3, InAudit: 2, Lost: 1, Duplicated: 1, Unacked: 1}
	if got != want {
		t.Fatalf("check = %+v, want %+v", got, want)
	}
}
