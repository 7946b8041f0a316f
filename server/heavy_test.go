package server

import (
	"context"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// blockingSelect is a backend whose selections say they started and run
// until the test lets them end.
type blockingSelect struct {
	testBackend
	started chan started
}

// started is a selection that began: its caller and its text's first
// word; closing finish ends it.
type started struct {
	name   string
	finish chan struct{}
}

func (b *blockingSelect) Select(ctx context.Context, caller, text string) (any, error) {
	finish := make(chan struct{})
	b.started <- started{caller + ":" + strings.Fields(text)[0], finish}
	select {
	case <-finish:
	case <-ctx.Done():
	}
	return map[string]string{"caller": caller}, nil
}

// waitFor polls cond, yielding, until it holds (the test's timeout bounds it).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
}

func (g *heavyGate) waiting(caller string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.agents[caller]; a != nil {
		return a.waiting
	}
	return 0
}

// Heavy selections take a slot: one agent's second waits for its first,
// every agent's wait for the total, in line; a light selection of another
// agent is served at once meanwhile; a heavy request whose client leaves
// stops waiting.
func TestHeavyWorkTakesASlot(t *testing.T) {
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}),
		Policy: &pipeline.StaticPolicy{Channels: map[string][]string{"*": {"*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := &blockingSelect{testBackend: testBackend{m}, started: make(chan started, 8)}
	s := New(b, Config{Tokens: []Token{{HashToken("tok-alice"), "alice"}, {HashToken("tok-bob"), "bob"}},
		Limits: Limits{HeavyText: 16, HeavyPerAgent: 1, HeavyTotal: 1}})
	heavyText := func(word string) string { return `{"text":"` + word + strings.Repeat(" x", 20) + `"}` }
	send := func(ctx context.Context, tok, body string) chan int {
		code := make(chan int, 1)
		go func() {
			r := httptest.NewRequest("POST", "/v1/select", strings.NewReader(body)).WithContext(ctx)
			r.Header.Set("Authorization", "Bearer "+tok)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			code <- w.Code
		}()
		return code
	}
	bob1 := send(t.Context(), "tok-bob", heavyText("one"))
	first := <-b.started
	if first.name != "bob:one" {
		t.Fatalf("started %q", first.name)
	}
	leave, left := context.WithCancel(t.Context())
	bobLeaves := send(leave, "tok-bob", heavyText("leaves"))
	waitFor(t, "bob's second heavy selection waits", func() bool { return s.heavyGate.waiting("bob") == 1 })
	bob2 := send(t.Context(), "tok-bob", heavyText("two"))
	waitFor(t, "bob's third waits too", func() bool { return s.heavyGate.waiting("bob") == 2 })
	left()
	if c := <-bobLeaves; c != 503 {
		t.Errorf("a request whose client left while waiting: %d", c)
	}
	waitFor(t, "the one that left stops waiting", func() bool { return s.heavyGate.waiting("bob") == 1 })

	// alice's light selection does not wait for heavy work.
	light := send(t.Context(), "tok-alice", `{"text":"light"}`)
	got := <-b.started
	if got.name != "alice:light" {
		t.Fatalf("started %q, want alice's light selection", got.name)
	}
	close(got.finish)
	if c := <-light; c != 200 {
		t.Fatalf("alice's light selection: %d", c)
	}
	// alice's heavy selection waits for the total, which bob holds.
	alice := send(t.Context(), "tok-alice", heavyText("heavy"))
	waitFor(t, "alice's heavy selection waits", func() bool {
		select {
		case c := <-alice:
			t.Fatalf("alice's heavy selection answered %d", c)
		default:
		}
		return s.heavyGate.waiting("alice") == 1
	})
	select {
	case got := <-b.started:
		t.Fatalf("%q started while bob's first held the only slot", got.name)
	default:
	}
	close(first.finish) // bob's first ends: alice was in line before bob's second took its own slot
	if c := <-bob1; c != 200 {
		t.Fatalf("bob's first: %d", c)
	}
	if got = <-b.started; got.name != "alice:heavy" {
		t.Fatalf("next started %q, want alice's (in line for the total first)", got.name)
	}
	close(got.finish)
	if got = <-b.started; got.name != "bob:two" {
		t.Fatalf("next started %q, want bob's second", got.name)
	}
	close(got.finish)
	for _, c := range []chan int{alice, bob2} {
		if code := <-c; code != 200 {
			t.Fatalf("status %d", code)
		}
	}
}
