package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/airs-dev/airs/internal/strictjson"
	"github.com/vmihailenco/msgpack/v5"
)

func needText(w http.ResponseWriter, t string) bool {
	if t == "" {
		writeError(w, http.StatusBadRequest, "bad_request", `"text" (the request in natural language) is required`)
		return false
	}
	return true
}

// readBody reads the whole (bounded) body: 413 past Config.MaxBody.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeErrorBody(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "payload_too_large",
				"message": fmt.Sprintf("body over %d bytes", mbe.Limit), "limit": mbe.Limit,
				"hint": "send less, or raise http.max_body in airs.yaml on the server (a call's arguments are bounded by max_payload too)"})
			return nil, false
		}
		writeError(w, http.StatusBadRequest, "bad_request", "reading the body: "+err.Error())
		return nil, false
	}
	return b, true
}

// decode reads a JSON body into v strictly: exactly one JSON value, no key
// twice in any object, no field v does not have (400 otherwise).
// MessagePack is only for /v1/call (415 elsewhere).
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if isMsgpack(r.Header.Get("Content-Type")) {
		writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
			"only POST /v1/call takes application/msgpack; send this body as JSON")
		return false
	}
	if !jsonBody(w, r) {
		return false
	}
	b, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := strictjson.Check(b); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "body: "+err.Error())
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "body: "+err.Error())
		return false
	}
	return true
}

// decodeMsgpack is decode for a MessagePack body: one map, string keys
// only, none twice at any depth, no trailing bytes, no unknown field.
func decodeMsgpack(w http.ResponseWriter, r *http.Request, v any) bool {
	b, ok := readBody(w, r)
	if !ok {
		return false
	}
	if err := checkMsgpack(b); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "MessagePack body: "+err.Error())
		return false
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "MessagePack body: "+err.Error())
		return false
	}
	return true
}

// jsonBody refuses (415) a body whose Content-Type says it is something
// other than JSON: a form or text/plain is what a page of another site can
// make a browser send without asking, so it is never read as a request. A
// body with no Content-Type at all is read as JSON (scripts and tools often
// send none; a browser always sends one).
func jsonBody(w http.ResponseWriter, r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return true
	}
	writeErrorBody(w, http.StatusUnsupportedMediaType, map[string]any{"error": "unsupported_media_type",
		"message": "Content-Type " + strconv.Quote(clip(ct)) + " is not JSON",
		"hint":    "send the body as JSON with Content-Type: application/json (POST /v1/call also takes application/msgpack)"})
	return false
}

// isMsgpack reports whether a Content-Type names MessagePack.
func isMsgpack(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && msgpackTypes[mt]
}

var msgpackTypes = map[string]bool{"application/msgpack": true, "application/x-msgpack": true, "application/vnd.msgpack": true}

// wantsMsgpack reports whether an Accept header prefers MessagePack to
// JSON: a MessagePack type with a q above 0 and above application/json's
// (JSON wins ties; */* alone keeps JSON).
func wantsMsgpack(accept string) bool {
	if accept == "" {
		return false
	}
	qMsg, qJSON := 0.0, -1.0
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if qs, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(qs, 64); err == nil {
				q = f
			}
		}
		switch {
		case msgpackTypes[mt]:
			qMsg = max(qMsg, q)
		case mt == "application/json":
			qJSON = max(qJSON, q)
		}
	}
	return qMsg > 0 && qMsg > qJSON
}
