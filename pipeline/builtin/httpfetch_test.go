package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// fetchPolicy: "web" reaches the loopback address only (by IP), "any"
// reaches every host, "none" no host.
var fetchPolicy = &pipeline.StaticPolicy{
	Channels: map[string][]string{"*": {"*"}},
	Capabilities: map[string][]pipeline.Capability{
		"web": {{Kind: KindNetwork, Arg: "127.0.0.1"}},
		"any": {{Kind: KindNetwork, Arg: "*"}},
	},
}

func fetchEntry(t *testing.T, opts HTTPFetchOptions) Entry {
	t.Helper()
	entries, err := Tools(Options{Policy: fetchPolicy, HTTPFetch: &opts})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Tool.Name == "http-fetch" {
			return e
		}
	}
	t.Fatal("http-fetch not registered with Options.HTTPFetch set")
	return Entry{}
}

type fetched struct {
	URL, ContentType, Body string
	Status                 int
	Bytes                  int64
	Truncated              bool
}

func decodeFetched(t *testing.T, out json.RawMessage) fetched {
	t.Helper()
	var f fetched
	if err := json.Unmarshal(out, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestHTTPFetchOffByDefault(t *testing.T) {
	entries, err := Tools(Options{Policy: fetchPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Tool.Name == "http-fetch" {
			t.Fatal("http-fetch registered without Options.HTTPFetch: no network tool unless configured")
		}
	}
}

func TestHTTPFetchGetAndPost(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(r.Method + " " + r.URL.Path + " " + r.Header.Get("Content-Type") + " " + string(b))
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "hello from "+r.URL.Path)
	}))
	defer srv.Close()
	e := fetchEntry(t, HTTPFetchOptions{AllowPrivate: true})

	out, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/page"})
	if err != nil {
		t.Fatal(err)
	}
	f := decodeFetched(t, out)
	if f.Status != 200 || f.Body != "hello from /page" || f.Truncated {
		t.Errorf("GET = %+v", f)
	}
	if g := got.Load(); g != "GET /page  " {
		t.Errorf("server saw %q", g)
	}

	out, err = invoke(t, e, "web", map[string]any{"url": srv.URL + "/in", "method": "POST", "body": "payload"})
	if err != nil {
		t.Fatal(err)
	}
	if f := decodeFetched(t, out); f.Status != 200 {
		t.Errorf("POST = %+v", f)
	}
	if g := got.Load(); g != "POST /in text/plain; charset=utf-8 payload" {
		t.Errorf("server saw %q", g)
	}

	if _, err := invoke(t, e, "web", map[string]any{"url": srv.URL, "body": "x"}); rejectCode(err) != CodeBadParams {
		t.Errorf("GET with a body: %v, want bad_params", err)
	}
}

func TestHTTPFetchNeedsNetworkOfTheHost(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	e := fetchEntry(t, HTTPFetchOptions{AllowPrivate: true})
	_, err := invoke(t, e, "none", map[string]any{"url": srv.URL})
	var denied *pipeline.ToolCapabilityDenied
	if !errors.As(err, &denied) || denied.Required[0] != (pipeline.Capability{Kind: KindNetwork, Arg: "127.0.0.1"}) {
		t.Fatalf("no Network grant: %v, want ToolCapabilityDenied Network(127.0.0.1)", err)
	}
	// Same server under another name: the capability names hosts, not addresses.
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if _, err := invoke(t, e, "web", map[string]any{"url": other}); !errors.As(err, &denied) {
		t.Fatalf("web fetching localhost: %v, want ToolCapabilityDenied", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times by refused calls", n)
	}
	if got := RequiredFor("http-fetch", []byte(`{"url":"https://API.example.org:8443/x"}`)); len(got) != 1 || got[0].Arg != "api.example.org" {
		t.Errorf("RequiredFor(http-fetch) = %v", got)
	}
}

func TestHTTPFetchRedirectsAreRechecked(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		io.WriteString(w, "secret side")
	}))
	defer other.Close()
	otherByName := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, otherByName+"/x", http.StatusFound)
		case "/near":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			io.WriteString(w, "final")
		}
	}))
	defer srv.Close()
	e := fetchEntry(t, HTTPFetchOptions{AllowPrivate: true, MaxRedirects: 3})

	var denied *pipeline.ToolCapabilityDenied
	if _, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/away"}); !errors.As(err, &denied) || denied.Required[0].Arg != "localhost" {
		t.Fatalf("redirect to an unheld host: %v, want ToolCapabilityDenied Network(localhost)", err)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the redirect target was reached %d times", n)
	}
	out, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/near"})
	if err != nil {
		t.Fatal(err)
	}
	if f := decodeFetched(t, out); f.Body != "final" || !strings.HasSuffix(f.URL, "/final") {
		t.Errorf("same-host redirect = %+v", f)
	}
	if _, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/loop"}); rejectCode(err) != CodeBadParams {
		t.Errorf("redirect loop: %v, want bad_params", err)
	}
}

func TestHTTPFetchBounds(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		io.WriteString(w, strings.Repeat("a", 5000))
	}))
	defer srv.Close()
	defer close(release)
	e := fetchEntry(t, HTTPFetchOptions{AllowPrivate: true, MaxBytes: 1000, MaxBody: 10, Timeout: 200 * time.Millisecond})

	out, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/big"})
	if err != nil {
		t.Fatal(err)
	}
	if f := decodeFetched(t, out); !f.Truncated || len(f.Body) != 1000 || f.Bytes != 1000 {
		t.Errorf("big body: truncated %v len %d bytes %d", f.Truncated, len(f.Body), f.Bytes)
	}
	if _, err := invoke(t, e, "web", map[string]any{"url": srv.URL, "method": "POST", "body": "more than ten bytes"}); rejectCode(err) != CodeTooLarge {
		t.Errorf("big POST body: %v, want too_large", err)
	}
	if _, err := invoke(t, e, "web", map[string]any{"url": srv.URL + "/slow"}); rejectCode(err) != CodeIO {
		t.Errorf("slow server: %v, want io_error (timed out)", err)
	}
	// The caller's own cancellation ends the call too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Handler.Invoke(ctx, []byte(`{"url":"`+srv.URL+`/slow"}`), &pipeline.Call{Caller: "web"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v, want context.Canceled", err)
	}
}

func TestHTTPFetchRefusesPrivateAddressesByDefault(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	e := fetchEntry(t, HTTPFetchOptions{})
	if _, err := invoke(t, e, "any", map[string]any{"url": srv.URL}); rejectCode(err) != CodeBadParams || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("loopback without AllowPrivate: %v, want bad_params naming loopback", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	if _, err := invoke(t, e, "any", map[string]any{"url": "file:///etc/passwd"}); rejectCode(err) != CodeBadParams {
		t.Errorf("file URL: %v, want bad_params", err)
	}
}
