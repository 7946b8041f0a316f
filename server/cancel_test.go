package server

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
)

// leftBackend works until its request's context ends, and says when it
// started and when it stopped.
type leftBackend struct {
	*testBackend
	started, ended chan string
}

func (b *leftBackend) work(ctx context.Context, what string) error {
	b.started <- what
	<-ctx.Done()
	b.ended <- what
	return ctx.Err()
}

func (b *leftBackend) Select(ctx context.Context, caller, text string) (any, error) {
	return nil, b.work(ctx, "select")
}
func (b *leftBackend) Plan(ctx context.Context, caller, text string) (any, error) {
	return nil, b.work(ctx, "plan")
}
func (b *leftBackend) Chat(ctx context.Context, caller, text string, emit func(string, any) error) error {
	return b.work(ctx, "chat")
}
func (b *leftBackend) RunPipeline(ctx context.Context, caller string, y []byte, in map[string]any) (any, error) {
	return nil, b.work(ctx, "pipeline")
}

// A client that leaves ends the work it asked for: /v1/select, /v1/plan,
// /v1/chat and /v1/pipelines/run give the backend the request's context,
// which ends when the connection closes (not at the request timeout).
func TestAbandonedRequestsEndTheirWork(t *testing.T) {
	m, err := pipeline.NewManager(pipeline.Config{Registry: pipeline.NewRegistry(pipeline.RegistryConfig{}), Policy: &pipeline.StaticPolicy{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := &leftBackend{testBackend: &testBackend{m}, started: make(chan string, 1), ended: make(chan string, 1)}
	s := New(b, Config{Tokens: []Token{{HashToken("tok"), "bob"}}, RequestTimeout: time.Hour})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(sctx, l) }()
	defer func() { stop(); <-done }()
	for _, c := range []struct{ path, body, what string }{
		{"/v1/select", `{"text":"x"}`, "select"},
		{"/v1/plan", `{"text":"x"}`, "plan"},
		{"/v1/chat", `{"text":"x"}`, "chat"},
		{"/v1/pipelines/run", `{"yaml":"steps: []"}`, "pipeline"},
	} {
		ctx, leave := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+l.Addr().String()+c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer tok")
		tr := &http.Transport{}
		errc := make(chan error, 1)
		go func() {
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		if got := <-b.started; got != c.what {
			t.Fatalf("%s: the backend started %s", c.path, got)
		}
		leave() // the client goes away: its connection closes
		select {
		case got := <-b.ended:
			if got != c.what {
				t.Errorf("%s: %s ended", c.path, got)
			}
		case <-time.After(10 * time.Second): // a failure's bound, not a wait: ended comes at once
			t.Fatalf("%s: the backend still works after its client left", c.path)
		}
		<-errc
		tr.CloseIdleConnections()
	}
}
