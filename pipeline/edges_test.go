package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A named provider that does not offer the tool is an error naming the
// providers that do; a named provider that does is preferred.
func TestUnknownProviderIsAnError(t *testing.T) {
	e := newEnv(t, nil)
	e.register(t, "alpha", tool("t"), echo)
	e.register(t, "beta", tool("t"), echo)
	res, err := e.m.Call(context.Background(), Request{Tool: "t", Provider: "gamma", Params: []byte(`{}`), Caller: "c"})
	var nf *ToolNotFound
	if !errors.As(err, &nf) || nf.Provider != "gamma" || strings.Join(nf.OfferedBy, ",") != "alpha,beta" {
		t.Fatalf("unknown provider: %v (%+v)", err, nf)
	}
	if !strings.Contains(err.Error(), "provider gamma") || !strings.Contains(err.Error(), "offered by alpha, beta") {
		t.Errorf("message %q", err)
	}
	if res == nil || res.ErrorKind != KindToolNotFound {
		t.Errorf("result %+v", res)
	}
	for _, p := range []string{"alpha", "beta"} {
		res, err := e.m.Call(context.Background(), Request{Tool: "t", Provider: p, Params: []byte(`{}`), Caller: "c"})
		if err != nil || res.Provider != p {
			t.Errorf("provider %s: %v, served by %q", p, err, res.Provider)
		}
	}
}

// Admit takes from the same bucket as calls.
func TestAdmitSharesTheCallBucket(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.RateLimit = RateLimit{PerSecond: 1, Burst: 2} })
	e.register(t, "p", tool("t"), echo)
	if err := e.m.Admit("c"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.Call(context.Background(), Request{Tool: "t", Params: []byte(`{}`), Caller: "c"}); err != nil {
		t.Fatal(err)
	}
	err := e.m.Admit("c")
	var rl *RateLimited
	if !errors.As(err, &rl) || rl.RetryAfterMs < 900 || rl.RetryAfterMs > 1000 {
		t.Fatalf("third request: %v", err)
	}
	if _, err := e.m.Call(context.Background(), Request{Tool: "t", Params: []byte(`{}`), Caller: "c"}); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("call after the bucket emptied: %v", err)
	}
	if err := e.m.Admit("other"); err != nil {
		t.Errorf("another caller has its own bucket: %v", err)
	}
	e.clock.Advance(time.Second)
	if err := e.m.Admit("c"); err != nil {
		t.Errorf("after a second: %v", err)
	}
}

// HTTP hints name body fields and endpoints, never a flag or a command;
// CLI hints stay as they were.
func TestHintForInterface(t *testing.T) {
	errs := []error{&ToolNotFound{Tool: "x"}, &Timeout{Budget: time.Second}, &SchemaValidationFailed{Tool: "x"},
		&ProviderUnavailable{Provider: "p"}, &RateLimited{}, &ToolCapabilityDenied{}, &Cancelled{}}
	for _, err := range errs {
		h := HintFor(err, HintHTTP)
		if h == "" || strings.Contains(h, "--") || strings.Contains(h, "`airs") {
			t.Errorf("%s: HTTP hint %q", KindOf(err), h)
		}
		if Hint(err) != HintFor(err, HintCLI) {
			t.Errorf("%s: Hint differs from the CLI's", KindOf(err))
		}
	}
	if h := HintFor(&Timeout{}, HintHTTP); !strings.Contains(h, "timeout_ms") {
		t.Errorf("timeout HTTP hint %q", h)
	}
	if h := Hint(&Timeout{}); !strings.Contains(h, "--timeout") {
		t.Errorf("timeout CLI hint %q", h)
	}
}
