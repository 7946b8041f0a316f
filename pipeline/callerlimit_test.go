package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"
)

// CallerRefused answers what Call would answer for an empty bucket,
// without taking a token: a transport asks it before reading a body.
func TestCallerRefusedPeeksAtTheBucket(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RateLimit = RateLimit{PerSecond: 1, Burst: 2} })
	e.register(t, "p", tool("t"), echo)
	call := func() error {
		_, err := e.m.Call(context.Background(), Request{Tool: "t", Params: []byte(`{}`), Caller: "c"})
		return err
	}
	for i := range 2 {
		for range 3 { // asking takes nothing
			if err := e.m.CallerRefused("c"); err != nil {
				t.Fatalf("call %d: refused with tokens left: %v", i+1, err)
			}
		}
		if err := call(); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err := e.m.CallerRefused("c")
	var rl *RateLimited
	if !errors.As(err, &rl) || rl.Reason != "" || rl.RetryAfterMs < 900 || rl.RetryAfterMs > 1000 {
		t.Fatalf("empty bucket: %v", err)
	}
	if err := call(); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("Call disagrees: %v", err)
	}
	if err := e.m.CallerRefused("other"); err != nil {
		t.Errorf("another caller: %v", err)
	}
	e.clock.Advance(time.Second)
	if err := e.m.CallerRefused("c"); err != nil {
		t.Errorf("after a second: %v", err)
	}
}
