package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/recommender"
)

// streamBackend is a Backend with recommendations whose updates the test
// pushes; it counts the streams that ended.
type streamBackend struct {
	*testBackend
	updates chan recommender.Update
	ended   atomic.Int32
}

func (b *streamBackend) Recommendations(string) []recommender.Recommendation { return nil }
func (b *streamBackend) SubscribeRecommendations(string) (<-chan recommender.Update, func()) {
	return b.updates, func() { b.ended.Add(1) }
}
func (b *streamBackend) AcceptRecommendation(context.Context, string, string) (*recommender.Recommendation, *pipeline.Result, error, error) {
	return nil, nil, nil, recommender.ErrNotFound
}
func (b *streamBackend) DismissRecommendation(string, string) error              { return recommender.ErrNotFound }
func (b *streamBackend) SetContext(context.Context, string, ContextUpdate) error { return nil }

// A client that opens the stream and never reads is cut off once the
// socket's buffers are full and a write has waited streamWriteTimeout: the
// handler returns instead of blocking for ever.
func TestStreamStalledClientEnds(t *testing.T) {
	old := streamWriteTimeout
	streamWriteTimeout = 200 * time.Millisecond
	defer func() { streamWriteTimeout = old }()
	reg := pipeline.NewRegistry(pipeline.RegistryConfig{})
	m, err := pipeline.NewManager(pipeline.Config{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	b := &streamBackend{testBackend: &testBackend{m}, updates: make(chan recommender.Update)}
	s := New(b, Config{Tokens: []Token{{HashToken("tok"), "alice"}}})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	defer func() { cancel(); <-done }()

	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /v1/recommendations/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok\r\n\r\n")
	big := &recommender.Recommendation{ID: "r", Tool: "t", Reason: strings.Repeat("x", 64<<10)}
	deadline := time.After(30 * time.Second)
	for b.ended.Load() == 0 {
		select {
		case b.updates <- recommender.Update{Type: "new", Recommendation: big}:
		case <-time.After(50 * time.Millisecond): // the handler is in a write
		case <-deadline:
			t.Fatal("the stream of a client that never reads did not end")
		}
	}
}
