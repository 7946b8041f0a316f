package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airs-dev/airs/mcp/relay"
	"github.com/airs-dev/airs/pipeline"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// One call of a server's tool: its context and progress, its result's
// encoding, and what a failure says about the link.

// invoke calls one tool (name, AIRS's airsName): the handler of every
// tool of the server. A channel that relays (mcp/relay) gets the whole
// result and the server's progress.
func (c *Conn) invoke(ctx context.Context, name, airsName string, params json.RawMessage) (json.RawMessage, error) {
	l, err := c.get(ctx)
	if err != nil {
		return nil, err
	}
	callCtx, cancel := c.callContext(ctx)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: params}
	rc := relay.FromContext(ctx)
	var handled chan struct{}
	if rc != nil && rc.Progress != nil {
		tok := c.progressSeq.Add(1)
		p.SetProgressToken(tok)
		handled = make(chan struct{}, 1)
		c.progressTo.Store(tok, progressRoute{rc.Progress, handled})
		// The go-sdk hands a result to its caller as it reads it, and the
		// notifications read before it to their handler in turn: the last
		// progress may be handled just after the result.
		defer time.AfterFunc(progressGrace, func() { c.progressTo.Delete(tok) })
	}
	res, err := l.sess.CallTool(callCtx, p)
	if handled != nil && err == nil {
		settleProgress(handled)
	}
	if err != nil {
		if ferr, ok := c.callFailed(ctx, callCtx, l, err); ok {
			return nil, ferr
		}
		var se *SampleError
		if errors.As(err, &se) {
			// The server asked AIRS to sample and AIRS could not: the
			// connection is fine.
			return nil, pipeline.Reject("sampling_failed", se.Error())
		}
		return nil, c.broken(l, err)
	}
	if res.IsError {
		return nil, pipeline.Reject("tool_error", contentText(res.Content))
	}
	var out json.RawMessage
	if res.StructuredContent != nil {
		out, err = c.encodeResult(res.StructuredContent)
	} else {
		out, err = c.encodeResult(res.Content)
	}
	if err == nil && rc != nil {
		// What is relayed is the whole result: it keeps to the same bound.
		if whole, err := json.Marshal(res); err == nil && len(whole) > c.srv.maxResponse() {
			return nil, pipeline.Reject("response_too_large", fmt.Sprintf("the server's result is %d bytes with all its content, over max_response_bytes (%d): ask for less, or raise mcp.servers.%s.max_response_bytes in airs.yaml", len(whole), c.srv.maxResponse(), c.srv.Name))
		}
		rc.SetResult(airsName, out, res)
	}
	return out, err
}

// progressGrace is how long after a call's result its progress is still
// passed on.
const progressGrace = 2 * time.Second

// progress passes a server's progress notification to the call that
// asked for it (its token is AIRS's own, one per relayed call).
func (c *Conn) progress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	var tok int64
	switch v := req.Params.ProgressToken.(type) {
	case float64: // a JSON number, decoded into any
		tok = int64(v)
	case int64:
		tok = v
	case json.Number:
		tok, _ = v.Int64()
	default:
		return
	}
	v, ok := c.progressTo.Load(tok)
	if !ok {
		return
	}
	r := v.(progressRoute)
	p := *req.Params
	p.ProgressToken = nil // the relay's receiver sets its own client's token
	r.to(ctx, &p)
	select {
	case r.handled <- struct{}{}:
	default:
	}
}

// progressRoute is where a relayed call's progress goes, and the signal
// that one was passed on.
type progressRoute struct {
	to      func(context.Context, *mcp.ProgressNotificationParams)
	handled chan struct{}
}

// settleProgress waits, after a result, while progress read before it is
// still being passed on (a notification every progressQuiet at least,
// progressSettle at most), so that the client gets it before the result.
func settleProgress(handled <-chan struct{}) {
	end := time.NewTimer(progressSettle)
	defer end.Stop()
	for {
		quiet := time.NewTimer(progressQuiet)
		select {
		case <-handled:
			quiet.Stop()
		case <-quiet.C:
			return
		case <-end.C:
			quiet.Stop()
			return
		}
	}
}

// Bounds of settleProgress.
const (
	progressQuiet  = 10 * time.Millisecond
	progressSettle = 250 * time.Millisecond
)

// callContext is ctx bounded by the server's own timeout, when it has one.
func (c *Conn) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.srv.Timeout > 0 {
		return context.WithTimeout(ctx, c.srv.Timeout)
	}
	return ctx, func() {}
}

// callFailed classifies what every request to the server can fail with:
// the caller's end or the server's timeout (the go-sdk sent
// notifications/cancelled; a stdio server that does not answer a ping
// within the grace period after it is hung, and is killed and restarted),
// or a JSON-RPC error. ok is false for anything else, which the caller
// classifies.
func (c *Conn) callFailed(ctx, callCtx context.Context, l *link, err error) (_ error, ok bool) {
	if callCtx.Err() != nil {
		go c.checkAfterCancel(l)
		if ctx.Err() == nil {
			return &pipeline.Timeout{Budget: c.srv.Timeout}, true
		}
		return ctx.Err(), true
	}
	var we *jsonrpc.Error
	// -32005 is the go-sdk's "rejected by transport": over HTTP, a request
	// that did not reach the server (its connection refused or reset), so
	// the connection is what failed, not the request (broken says so).
	if errors.As(err, &we) && we.Code != codeRejectedByTransport {
		return pipeline.Reject("mcp_error", fmt.Sprintf("%s (code %d)", we.Message, we.Code)), true
	}
	return nil, false
}

// codeRejectedByTransport is the go-sdk's jsonrpc2.ErrRejected (internal).
const codeRejectedByTransport = -32005

// encodeResult is a server's result as JSON, within max_response_bytes.
func (c *Conn) encodeResult(v any) (json.RawMessage, error) {
	out, err := json.Marshal(v)
	if err != nil {
		return nil, pipeline.Reject("mcp_error", "the server's result does not encode as JSON: "+err.Error())
	}
	if max := c.srv.maxResponse(); len(out) > max {
		return nil, pipeline.Reject("response_too_large", fmt.Sprintf("the server's result is %d bytes, over max_response_bytes (%d): ask for less, or raise mcp.servers.%s.max_response_bytes in airs.yaml", len(out), max, c.srv.Name))
	}
	return out, nil
}

// broken classifies a call whose connection ended under it, takes the
// link out of service and starts a restart.
func (c *Conn) broken(l *link, err error) error {
	s := c.srv
	if (l.lim != nil && l.lim.tripped.Load()) || (l.http != nil && l.http.tripped.Swap(false)) {
		c.lost(l, "a message over max_message_bytes")
		return pipeline.Reject("message_too_large", fmt.Sprintf("the server sent a message over max_message_bytes (%d); the connection was closed and the server restarted: raise mcp.servers.%s.max_message_bytes in airs.yaml if such answers are expected", s.maxMessage(), s.Name))
	}
	var why string
	if l.lim != nil && !l.lim.peerEnded() {
		// The read side ended before the server closed its stdout: what it
		// sent did not decode as JSON-RPC.
		why = "the server broke the protocol: it sent a message that is not JSON-RPC (" + err.Error() + "); the connection broke and the server was killed"
		c.Kills.Add(1)
	} else if l.proc != nil && l.proc.hasExited(time.Second) {
		why = "its process " + l.proc.exitText() + " during the call"
	} else {
		why = "the connection broke during the call (" + err.Error() + ")"
		if l.proc != nil {
			why += "; the server was killed"
			c.Kills.Add(1)
		}
	}
	c.lost(l, why)
	return &pipeline.ProviderCrashed{Provider: c.id, Panic: why}
}

// checkAfterCancel pings a stdio server after a cancelled call: one that
// does not answer within the grace period is killed and restarted.
func (c *Conn) checkAfterCancel(l *link) {
	if l.proc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.srv.grace())
	defer cancel()
	if err := l.sess.Ping(ctx, nil); err != nil {
		c.Kills.Add(1)
		c.lost(l, fmt.Sprintf("it did not answer a ping within %v of a cancelled call", c.srv.grace()))
	}
}

// contentText joins a result's text content (an error result's message).
func contentText(cs []mcp.Content) string {
	var parts []string
	for _, ct := range cs {
		if t, ok := ct.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(cs)
		return string(b)
	}
	return strings.Join(parts, "\n")
}
