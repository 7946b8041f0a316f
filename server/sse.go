package server

import (
	"fmt"
	"net/http"
	"time"
)

// eventStream writes server-sent events with a deadline on every write, so
// that a client that stops reading ends its stream instead of holding the
// handler (it reconnects and resyncs from a snapshot). The API's
// recommendation stream and the attention page's stream share it.
type eventStream struct {
	w  http.ResponseWriter
	fl http.Flusher
	rc *http.ResponseController
}

// newEventStream answers 500 and false when w cannot stream. Call done
// when the stream ends.
func newEventStream(w http.ResponseWriter) (*eventStream, bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal", "streaming unsupported")
		return nil, false
	}
	return &eventStream{w: w, fl: fl, rc: http.NewResponseController(w)}, true
}

// start sends the headers and the client's reconnect delay (1 s).
func (es *eventStream) start() bool {
	h := es.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	es.w.WriteHeader(http.StatusOK)
	return es.write("retry: 1000\n\n")
}

// send writes one event; false when the client is gone or too slow.
func (es *eventStream) send(event string, data []byte) bool {
	return es.write(fmt.Sprintf("event: %s\ndata: %s\n\n", event, data))
}

// keepAlive writes a comment, so that idle streams are seen alive.
func (es *eventStream) keepAlive() bool { return es.write(": keep-alive\n\n") }

func (es *eventStream) write(s string) bool {
	_ = es.rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
	if _, err := fmt.Fprint(es.w, s); err != nil {
		return false
	}
	es.fl.Flush()
	return true
}

// done clears the write deadline: a reused connection's next answer has none.
func (es *eventStream) done() { _ = es.rc.SetWriteDeadline(time.Time{}) }
