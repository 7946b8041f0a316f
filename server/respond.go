package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airs-dev/airs/pipeline"
)

// statusClientLeft is the status of a request whose client left before
// its answer: nginx's "client closed request" (only /metrics sees it).
const statusClientLeft = 499

// statusFor maps the 15 pipeline error kinds to HTTP statuses.
func statusFor(err error) int {
	switch pipeline.KindOf(err) {
	case pipeline.KindToolNotFound:
		return http.StatusNotFound
	case pipeline.KindToolDeprecated:
		return http.StatusGone
	case pipeline.KindChannelCapabilityDenied, pipeline.KindToolCapabilityDenied, pipeline.KindIntentMisaligned:
		return http.StatusForbidden
	case pipeline.KindSchemaValidationFailed, pipeline.KindProviderRejected:
		return http.StatusUnprocessableEntity
	case pipeline.KindPayloadTooLarge:
		return http.StatusRequestEntityTooLarge
	case pipeline.KindTimeout:
		return http.StatusGatewayTimeout
	case pipeline.KindProviderUnavailable:
		return http.StatusServiceUnavailable
	case pipeline.KindProviderCrashed:
		return http.StatusBadGateway
	case pipeline.KindRateLimited:
		return http.StatusTooManyRequests
	case pipeline.KindIntentVerificationRequired:
		return http.StatusPreconditionRequired // 428: a person confirms first
	case pipeline.KindCancelled:
		return statusClientLeft
	case pipeline.KindWouldTimeout:
		// 412: the request's own condition, its timeout, cannot be met —
		// said before anything ran (504 is a timeout that happened).
		return http.StatusPreconditionFailed
	case pipeline.KindAlreadyClaimed:
		return http.StatusConflict // 409: a retry of a call an earlier attempt started
	}
	return http.StatusInternalServerError
}

func kindOr(err error, def string) string {
	if k := pipeline.KindOf(err); k != "" && k != "internal" {
		return k
	}
	return def
}

// Error bodies are bounded: at most maxListed errors are listed (with the
// count of all of them), and a message is cut at maxMessage bytes, so a
// request that breaks every rule cannot make an answer of any size.
const (
	maxListed  = 20
	maxMessage = 4096
)

// ErrorBody is {"error": kind, "message", "hint"} plus, for an error that
// is a list (schema violations, a pipeline's errors), "errors" (the first
// 20) and "error_count". The hint speaks HTTP: body fields and endpoints,
// not the CLI's flags. The engine's chat stream uses it for its events.
func ErrorBody(err error, kind string) map[string]any {
	body := map[string]any{"error": kind}
	var sv *pipeline.SchemaValidationFailed
	var list []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		list = j.Unwrap()
	}
	switch {
	case errors.As(err, &sv) && len(sv.Errors) > 0:
		shown := *sv
		if len(shown.Errors) > maxListed {
			shown.Errors = shown.Errors[:maxListed]
		}
		msg := shown.Error()
		if n := len(sv.Errors) - len(shown.Errors); n > 0 {
			msg += fmt.Sprintf("; … and %d more", n)
		}
		body["message"] = clip(msg)
		fes := make([]pipeline.FieldError, len(shown.Errors))
		for i, fe := range shown.Errors {
			fes[i] = pipeline.FieldError{Pointer: clip(fe.Pointer), Message: clip(fe.Message)}
		}
		body["errors"], body["error_count"] = fes, len(sv.Errors)
	case len(list) > 1:
		n := min(len(list), maxListed)
		msgs := make([]map[string]string, n)
		parts := make([]string, n)
		for i, e := range list[:n] {
			parts[i] = e.Error()
			msgs[i] = map[string]string{"message": clip(parts[i])}
		}
		msg := strings.Join(parts, "; ")
		if len(list) > n {
			msg += fmt.Sprintf("; … and %d more", len(list)-n)
		}
		body["message"] = clip(msg)
		body["errors"], body["error_count"] = msgs, len(list)
	default:
		body["message"] = clip(err.Error())
	}
	if pipeline.KindOf(err) != "internal" {
		body["hint"] = pipeline.HintFor(err, pipeline.HintHTTP)
	}
	var ivr *pipeline.IntentVerificationRequired
	if errors.As(err, &ivr) {
		body["confirmation"] = confirmationBody(ivr)
	}
	// Several files fit the request equally well: nothing was guessed; the
	// client asks its user and sends the request again naming one.
	var amb Ambiguous
	if errors.As(err, &amb) {
		body["phrase"], body["choices"] = amb.Ambiguity()
	}
	return body
}

// Ambiguous is an error that names several equally good choices instead
// of guessing one (selector.AmbiguousError): the words that matched and
// the choices, each encoded as JSON in the error body.
type Ambiguous interface {
	error
	Ambiguity() (phrase string, choices any)
}

// clip cuts s to maxMessage bytes on a rune boundary, saying so.
func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d of %d bytes]", cut, len(s))
}

func writeCallError(w http.ResponseWriter, res *pipeline.Result, err error) {
	setRetryAfter(w, err)
	body := ErrorBody(err, kindOr(err, "internal"))
	if res != nil && res.Replayed {
		body["replayed"] = true // the first attempt's error, given back: nothing ran now
	}
	if _, ok := body["hint"]; !ok {
		body["hint"] = pipeline.HintFor(err, pipeline.HintHTTP)
	}
	if res != nil && len(res.Output) > 0 {
		body["partial"] = res // a cancelled call's partial output is still delivered
	}
	writeErrorBody(w, statusFor(err), body)
}

// setRetryAfter says when to ask again for the errors that have a when:
// a rate limit, a provider that is unavailable (every 503), a call an
// earlier attempt still runs.
func setRetryAfter(w http.ResponseWriter, err error) {
	var rl *pipeline.RateLimited
	if errors.As(err, &rl) {
		w.Header().Set("Retry-After", strconv.FormatInt(max((rl.RetryAfterMs+999)/1000, 1), 10))
	}
	var pu *pipeline.ProviderUnavailable
	if errors.As(err, &pu) {
		// Every 503 says when to come back: an open circuit until its
		// cooldown ends; a provider that is down has no known end, so the
		// client waits a second and asks again rather than at line rate.
		w.Header().Set("Retry-After", retryAfterSeconds(pu.RetryAfter))
	}
	var ac *pipeline.AlreadyClaimed
	if errors.As(err, &ac) && ac.RetryAfterMs > 0 { // the first attempt still runs: ask again then
		w.Header().Set("Retry-After", strconv.FormatInt(max((ac.RetryAfterMs+999)/1000, 1), 10))
	}
}

// retryAfterSeconds is d as Retry-After's whole seconds, rounded up, and
// at least 1.
func retryAfterSeconds(d time.Duration) string {
	return strconv.FormatInt(max(int64((d+time.Second-1)/time.Second), 1), 10)
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	writeErrorBody(w, status, map[string]any{"error": kind, "message": clip(msg)})
}

func writeErrorBody(w http.ResponseWriter, status int, body map[string]any) {
	if sw, ok := w.(*statusWriter); ok {
		body = scrubBody(sw.scrub, body) // no host paths in what went wrong (scrub.go)
	}
	writeJSON(w, status, body)
}

// writeJSON answers v as JSON, or as MessagePack when the request's
// Accept header prefers it.
func writeJSON(w http.ResponseWriter, status int, v any) {
	if sw, ok := w.(*statusWriter); ok && sw.msgpack {
		b, err := toMsgpack(v)
		if err == nil {
			w.Header().Set("Content-Type", "application/msgpack")
			w.WriteHeader(status)
			_, _ = w.Write(b)
			return
		}
		// Cannot happen for what encoding/json can write; answer JSON.
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type statusWriter struct {
	http.ResponseWriter
	status  int
	msgpack bool              // the client prefers application/msgpack answers
	scrub   *strings.Replacer // the host's paths → their names, for error texts
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
