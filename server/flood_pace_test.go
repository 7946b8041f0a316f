package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// A client's early requests are held until it was told while it has
// made at most holdFree of them lately; each further one longer, doubling,
// up to holdMax. A request after its wait is never held, a client with a
// few requests in flight is never held past its wait, and one with no
// early request for strikeMemory starts afresh.
func TestEarlyRequestsAreHeldLongerEachTime(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1e9, 0)}
	g := newFloodGate(DefaultLimits)
	g.now = clk.now
	const key = 42
	g.told(key, 500*time.Millisecond, "")
	var holds []time.Duration
	for range holdFree + 8 {
		holds = append(holds, hold(g.holdFor(key)))
	}
	for i, d := range holds[:holdFree] {
		if d != 500*time.Millisecond {
			t.Fatalf("early request %d held %v, want what it was told (500ms): %v", i+1, d, holds)
		}
	}
	for i := holdFree; i < len(holds); i++ {
		if d := holds[i]; d <= holds[i-1] && d != holdMax || d > holdMax {
			t.Fatalf("early request %d held %v after %v: want longer, at most %v: %v", i+1, d, holds[i-1], holdMax, holds)
		}
	}
	if holds[len(holds)-1] != holdMax {
		t.Fatalf("a client that keeps asking early is held up to %v: %v", holdMax, holds)
	}
	// Its wait over, a request is not held; its early requests are
	// remembered: told again, its next early request is held longer at once.
	clk.add(time.Second)
	if d, _ := g.holdFor(key); d != 0 {
		t.Fatalf("a request after its wait was held %v", d)
	}
	g.told(key, 500*time.Millisecond, "")
	if d, _ := g.holdFor(key); d <= 500*time.Millisecond {
		t.Fatalf("a client that flooded a moment ago, told again and early: held %v, want more than it was told", d)
	}
	// A client with a few requests in flight: four early requests a
	// second, each learning of its 429 from its own answer, for a minute:
	// never held past what it was told.
	clk.add(strikeMemory)
	for i := range 240 {
		clk.add(250 * time.Millisecond)
		if i%4 == 0 {
			g.told(key, time.Second, "")
		}
		if d, _ := g.holdFor(key); d > time.Second {
			t.Fatalf("early request %d of a client with four in flight: held %v, past what it was told", i+1, d)
		}
	}
	// No early request for strikeMemory: it starts afresh.
	clk.add(strikeMemory)
	if d, _ := g.holdFor(key); d != 0 {
		t.Fatalf("after strikeMemory: held %v", d)
	}
	g.told(key, 500*time.Millisecond, "")
	if d, _ := g.holdFor(key); d != 500*time.Millisecond {
		t.Fatalf("forgotten, told again, early: held %v, want 500ms", d)
	}
}

// pace runs one client against the rig for span of the rig's clock:
// each request takes a millisecond and a hold takes its time; the client
// asks again at once (flood) or after its Retry-After, and with hangUp
// it gives up on a request unanswered after hangUp and asks again at
// once. It answers the requests that reached authentication (the work a
// refusal past the flood gate costs) and the ones served.
func (f *floodRig) pace(t *testing.T, tok string, span time.Duration, flood bool, hangUp time.Duration) (checked, served int) {
	t.Helper()
	end := f.clk.now().Add(span)
	checks := f.s.tokenChecks.Load()
	for n := 0; f.clk.now().Before(end); n++ {
		if n > 1_000_000 {
			t.Fatalf("%d requests in %v", n, span)
		}
		ctx, cancel := context.WithCancel(context.Background())
		f.s.flood.sleep = func(_ context.Context, d time.Duration) {
			if hangUp > 0 && d > hangUp {
				f.clk.add(hangUp)
				cancel()
				return
			}
			f.clk.add(d)
		}
		r := httptest.NewRequestWithContext(ctx, "POST", "/v1/call", strings.NewReader(echoCall))
		r.RemoteAddr = "127.0.0.1:7000"
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		f.s.ServeHTTP(w, r)
		left := ctx.Err() != nil
		cancel()
		f.clk.add(time.Millisecond)
		switch {
		case left:
		case w.Code == 200:
			served++
		case w.Code == 429 && !flood:
			f.clk.add(retryAfterOf(w.Header()))
		case w.Code != 429:
			t.Fatalf("%s: %d %s", tok, w.Code, w.Body)
		}
	}
	return int(f.s.tokenChecks.Load() - checks), served
}

// Flooding does not pay: over a minute, a client that asks again at once
// whatever it is told is served no more often than one that waits as its
// Retry-After says, with the same rate limit, and costs the server at most
// one more refusal per wait; one that also hangs up after 100 ms and asks
// again (ten requests a second) costs no more than that either: its
// requests are held, and end with nothing done when it hangs up — but its
// agent pays for them from its rate limit, so it is served far less.
func TestFloodingDoesNotPay(t *testing.T) {
	rates := map[string]pipeline.RateLimit{"bob": {PerSecond: 1, Burst: 1}}
	run := func(flood bool, hangUp time.Duration) (int, int) {
		return newFloodRig(t, Limits{}, rates).pace(t, "tok-bob", time.Minute, flood, hangUp)
	}
	waitChecks, waited := run(false, 0)
	floodChecks, flooded := run(true, 0)
	hangChecks, hung := run(true, 100*time.Millisecond)
	t.Logf("a minute at 1 a second: waits as told: %d served, %d authenticated; floods: %d, %d; floods hanging up after 100 ms: %d, %d",
		waited, waitChecks, flooded, floodChecks, hung, hangChecks)
	if waited < 50 {
		t.Fatalf("the client that waits as told was served %d times in a minute at 1 a second", waited)
	}
	if flooded > waited+1 || hung > waited+1 {
		t.Errorf("flooding paid: served %d and %d times, against %d for waiting as told", flooded, hung, waited)
	}
	// Ten early requests a second cost the agent a token each: its
	// allowance goes to its flood, not to work.
	if 2*hung > waited {
		t.Errorf("the client that floods and hangs up was served %d times, against %d for waiting as told: its early requests cost its agent nothing", hung, waited)
	}
	for _, c := range []struct {
		name   string
		checks int
	}{{"flooding", floodChecks}, {"flooding and hanging up", hangChecks}} {
		if c.checks > 2*waitChecks+2 {
			t.Errorf("the %s client's requests were authenticated %d times in a minute, against %d for waiting as told", c.name, c.checks, waitChecks)
		}
	}
}

// A held request whose client leaves ends there: no token compared, no
// body read, no rate-limit token taken, no answer written.
func TestHeldRequestWhoseClientLeftCostsNothing(t *testing.T) {
	f := newFloodRig(t, Limits{}, map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 2}})
	const addr = "127.0.0.1:5000"
	probe := httptest.NewRequest("POST", "/v1/call", nil)
	probe.RemoteAddr = addr
	probe.Header.Set("Authorization", "Bearer tok-bob")
	f.s.flood.told(f.s.flood.clientKey(clientAddr(probe), probe), 10*time.Second, "bob")

	ctx, cancel := context.WithCancel(context.Background())
	f.s.flood.sleep = func(hctx context.Context, d time.Duration) {
		cancel() // the client leaves while its request is held
		<-hctx.Done()
	}
	cb := &countingBody{r: strings.NewReader(echoCall)}
	r := httptest.NewRequestWithContext(ctx, "POST", "/v1/call", cb)
	r.RemoteAddr = addr
	r.Header.Set("Authorization", "Bearer tok-bob")
	w := httptest.NewRecorder()
	checks := f.s.tokenChecks.Load()
	f.s.ServeHTTP(w, r)
	if n := f.s.tokenChecks.Load() - checks; n != 0 {
		t.Errorf("%d token checks for a request whose client left", n)
	}
	if n := cb.read.Load(); n != 0 {
		t.Errorf("%d bytes of its body read", n)
	}
	if w.Body.Len() != 0 || len(w.Header().Values("Retry-After")) != 0 {
		t.Errorf("an answer written for nobody: %q", w.Body)
	}
	// Both of bob's tokens are still there once his wait is over.
	f.s.flood.sleep = func(context.Context, time.Duration) {}
	f.clk.add(10 * time.Second)
	for i := range 2 {
		if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 200 {
			t.Fatalf("bob's call %d after his wait: %d %s (the left request took a token?)", i+1, w.Code, w.Body)
		}
	}
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 429 {
		t.Fatalf("bob's third call: %d, want 429 (his bucket holds 2)", w.Code)
	}
}

// While a flooding client's request is held, another agent at the same
// address is served at once.
func TestQuietAgentServedWhileAFlooderIsHeld(t *testing.T) {
	f := newFloodRig(t, Limits{}, map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 1}})
	const addr = "127.0.0.1:5000"
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 200 {
		t.Fatalf("bob's first call: %d", w.Code)
	}
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 429 {
		t.Fatalf("bob over his rate: %d", w.Code)
	}
	parked, release := make(chan struct{}), make(chan struct{})
	f.s.flood.sleep = func(ctx context.Context, d time.Duration) {
		close(parked)
		<-release
	}
	done := make(chan int)
	go func() {
		w, _ := f.do(addr, "tok-bob", echoCall)
		done <- w.Code
	}()
	<-parked
	for i := range 3 {
		if w, _ := f.do(addr, "tok-alice", echoCall); w.Code != 200 {
			t.Fatalf("alice's call %d while bob is held: %d %s", i+1, w.Code, w.Body)
		}
	}
	close(release)
	if code := <-done; code != 429 {
		t.Fatalf("bob's held call, released: %d, want 429 (his bucket is empty)", code)
	}
}

// A request whose client left while it waited for a heavy slot never
// runs, even when a slot was free at that moment too.
func TestHeavySlotNotTakenForALeftRequest(t *testing.T) {
	g := newHeavyGate(Limits{HeavyPerAgent: 1, HeavyTotal: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		if release, err := g.acquire(ctx, "bob"); err == nil {
			release()
			t.Fatalf("attempt %d: a request whose client left got a heavy slot", i+1)
		}
	}
	release, err := g.acquire(context.Background(), "bob")
	if err != nil {
		t.Fatalf("the slots were not given back: %v", err)
	}
	release()
}

func hold(d time.Duration, _ string) time.Duration { return d }

// A client that keeps asking early costs its agent: each early request
// past holdFree owes a token of the agent's rate limit, up to
// floodTaxMax; a client with no more than holdFree early requests lately,
// and another agent at the same address, owe nothing.
func TestFloodingCostsItsAgentTokens(t *testing.T) {
	f := newFloodRig(t, Limits{}, map[string]pipeline.RateLimit{"bob": {PerSecond: 0.001, Burst: 1}})
	const addr = "127.0.0.1:5000"
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 200 {
		t.Fatalf("bob's first call: %d", w.Code)
	}
	if w, _ := f.do(addr, "tok-bob", echoCall); w.Code != 429 {
		t.Fatalf("bob over his rate: %d", w.Code)
	}
	owed := func(agent string) int {
		f.s.owed.mu.Lock()
		defer f.s.owed.mu.Unlock()
		return f.s.owed.by[agent]
	}
	// bob's client asks early and hangs up each time while it is held.
	early := func(n int) {
		for range n {
			ctx, cancel := context.WithCancel(context.Background())
			f.s.flood.sleep = func(context.Context, time.Duration) { cancel() }
			r := httptest.NewRequestWithContext(ctx, "POST", "/v1/call", strings.NewReader(echoCall))
			r.RemoteAddr = addr
			r.Header.Set("Authorization", "Bearer tok-bob")
			f.s.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
	early(holdFree)
	if n := owed("bob"); n != 0 {
		t.Fatalf("bob owes %d after %d early requests, want 0", n, holdFree)
	}
	early(5)
	if n := owed("bob"); n != 5 {
		t.Fatalf("bob owes %d after %d early requests, want 5", n, holdFree+5)
	}
	early(2 * floodTaxMax)
	if n := owed("bob"); n != floodTaxMax {
		t.Fatalf("bob owes %d after a long flood, want at most %d", n, floodTaxMax)
	}
	f.s.flood.sleep = func(context.Context, time.Duration) {}
	if w, _ := f.do(addr, "tok-alice", echoCall); w.Code != 200 || owed("alice") != 0 {
		t.Fatalf("alice at bob's address: %d, owes %d", w.Code, owed("alice"))
	}
}
