//go:build unix

package client

import (
	"context"
	"testing"
	"time"

	"github.com/airs-dev/airs/mcp/relay"
	"github.com/airs-dev/airs/pipeline"
)

// TestRelayedResultKeepsTheBound: a relayed result is the whole result,
// content blocks and all, and max_response_bytes bounds that; the
// pipeline's output alone (structuredContent) is bounded as it is.
func TestRelayedResultKeepsTheBound(t *testing.T) {
	h := mustStart(t, func(s *Server) { s.MaxResponseBytes = 100 })
	if res, err := h.call("media", `{}`, 10*time.Second); err != nil || string(res.Output) != `{"blocks":5}` {
		t.Fatalf("media unrelayed: %v %v", err, res)
	}
	rc := &relay.Call{}
	_, err := h.m.Call(relay.NewContext(context.Background(), rc), pipeline.Request{Tool: "h.media", Params: []byte(`{}`), Caller: "u"})
	wantKind(t, err, pipeline.KindProviderRejected, "with all its content")

	h2 := mustStart(t, nil)
	rc = &relay.Call{}
	res, err := h2.m.Call(relay.NewContext(context.Background(), rc), pipeline.Request{Tool: "h.media", Params: []byte(`{}`), Caller: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if r := rc.Result("h.media", res.Output); r == nil || len(r.Content) != 5 {
		t.Fatalf("relayed result: %+v", r)
	}
	if rc.Result("h.other", res.Output) != nil || rc.Result("h.media", []byte(`{"blocks":6}`)) != nil {
		t.Fatal("the relay answers for another tool, or for an output the pipeline changed")
	}
}
