package server

// Calls made by other processes (`airs call`, `airs chat` on the same
// AIRS_HOME) never pass this server's pipeline, so its call events do not
// show them; the audit log they append to does. The hub follows the log's
// new lines while pages are open and shows each agent its calls from
// there too, once: a call this server ran arrives both as an event and as
// an audit line, and the hub keeps the call ids it has shown.

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"time"

	"github.com/airs-dev/airs/pipeline"
	"github.com/airs-dev/airs/pipeline/audit"
)

// UICallLogBackend is a UIBackend whose calls other processes append to a
// file (the audit log): its path, "" for none (a log kept elsewhere).
type UICallLogBackend interface {
	CallLogPath() string
}

const (
	uiTailEvery = 500 * time.Millisecond // the log is looked at this often while pages are open
	uiTailChunk = 4 << 20                // bytes read at one look at most; the rest at the next
	uiSeenCalls = 16384                  // call ids remembered to show each call once
)

// seenCall reports whether id was shown already, and remembers it (h.mu
// held). An event without an id is always new.
func (h *callHub) seenCall(id string) bool {
	if id == "" {
		return false
	}
	if _, ok := h.seen[id]; ok {
		return true
	}
	if len(h.seenOrder) >= uiSeenCalls {
		delete(h.seen, h.seenOrder[0])
		h.seenOrder = h.seenOrder[1:]
	}
	h.seen[id] = struct{}{}
	h.seenOrder = append(h.seenOrder, id)
	return false
}

// followLog publishes the calls appended to path from now on, until stop.
// While no page is open it only notes where the log ends.
func (h *callHub) followLog(path string, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	off := int64(-1)
	t := time.NewTicker(uiTailEvery)
	defer t.Stop()
	for {
		off = h.readLog(path, off)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// readLog publishes the complete lines of path after off and returns the
// offset after the last one; off < 0 starts at the end.
func (h *callHub) readLog(path string, off int64) int64 {
	f, err := os.Open(path)
	if err != nil {
		return max(off, 0)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return max(off, 0)
	}
	size := fi.Size()
	h.mu.Lock()
	watched := len(h.clients) > 0
	h.mu.Unlock()
	if off < 0 || off > size || !watched {
		return size // the start, a log started anew, or nobody to show it to
	}
	if size == off {
		return off
	}
	b := make([]byte, min(size-off, uiTailChunk))
	n, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return off
	}
	b = b[:n]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return off // a line still being written
	}
	for _, line := range bytes.Split(b[:end], []byte{'\n'}) {
		var r audit.Record
		if json.Unmarshal(line, &r) != nil || r.Speculative || r.Replayed || r.Tool == "" {
			continue
		}
		h.publish(pipeline.CallEvent{CallID: r.CallID, Caller: r.Caller, Provider: r.Provider, Tool: r.Tool, Version: r.Version,
			Outcome: pipeline.Outcome(r.Outcome), ErrorKind: r.Error, Latency: time.Duration(r.LatencyNs), At: r.Time})
	}
	return off + int64(end) + 1
}
