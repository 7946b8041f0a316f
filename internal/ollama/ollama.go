// Package ollama is AIRS's own small interface to an Ollama server, over the
// wire types and client of github.com/ollama/ollama/api.
//
// It exposes only what AIRS uses: a streaming chat whose output is
// constrained by a JSON Schema (Ollama's `format`), embeddings, and a
// liveness check. A chat request never carries a `tools` field: AIRS
// constrains tool calls with its own grammar, exported as the `format`
// schema.
//
// Errors are sorted so callers can act on them:
//
//   - ErrUnavailable (errors.Is): nothing answers at the server's address
//     (connection refused, unknown host, dial timeout). Callers switch to
//     their no-LLM mode.
//   - *ServerError (errors.As): the server answered with an error status, or
//     reported an error in the middle of a stream; Message is the server's
//     own text. A 404 also matches ErrModelNotFound.
//   - ErrTruncated (errors.Is): the stream ended — connection dropped, body
//     cut — before the server's final `done` message. When the body ended
//     cleanly after a run of 31 identical tokens, the error also matches
//     ErrRepeatLimit: Ollama's own guard against looping models ends the
//     stream that way, with no `done` and no error.
//   - an error returned by the caller's chunk callback, returned as is: the
//     callback asked to stop, and the request was cancelled.
//   - the context's error when the caller's context ends.
//
// In the last three cases Chat also returns what was received so far.
package ollama

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultHost is used when neither Config.Host nor OLLAMA_HOST is set.
const DefaultHost = "http://127.0.0.1:11434"

var (
	// ErrUnavailable means no Ollama server answers at the configured address.
	ErrUnavailable = errors.New("ollama: server unavailable")
	// ErrTruncated means a streamed response ended before its final message.
	ErrTruncated = errors.New("ollama: response stream truncated")
	// ErrModelNotFound matches a *ServerError with status 404.
	ErrModelNotFound = errors.New("ollama: model not found")
	// ErrRepeatLimit comes with ErrTruncated when the stream ended cleanly
	// but without its final message after a run of identical tokens: Ollama
	// (llm/server.go) silently ends a generation whose token, trimmed of
	// white space, repeats more than 30 times — which includes 31 tokens of
	// pure white space.
	ErrRepeatLimit = errors.New("ollama: server stopped a looping generation (same token over 30 times)")
)

// ServerError is an error reported by the server.
type ServerError struct {
	// StatusCode is the HTTP status, or 0 when the error came inside a
	// stream that had started with 200 OK.
	StatusCode int
	// Message is the server's error text, e.g. `model 'x' not found`.
	Message string
}

func (e *ServerError) Error() string {
	if e.StatusCode == 0 {
		return "ollama: server error in stream: " + e.Message
	}
	return fmt.Sprintf("ollama: server error %d %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// Is reports whether target is ErrModelNotFound and this is a 404.
func (e *ServerError) Is(target error) bool {
	return target == ErrModelNotFound && e.StatusCode == http.StatusNotFound
}

// Client is what AIRS needs from an Ollama server.
type Client interface {
	// Chat streams one assistant reply. onChunk (may be nil) receives each
	// piece of content as it arrives; if it returns an error, the request is
	// cancelled and Chat returns the content received so far with that error.
	Chat(ctx context.Context, req ChatRequest, onChunk func(chunk string) error) (ChatResponse, error)
	// Embed returns one vector per input, in order (/api/embed; Ollama
	// normalizes them to unit length).
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
	// Ping checks that the server answers (/api/version).
	Ping(ctx context.Context) error
	// Version returns the server's version string.
	Version(ctx context.Context) (string, error)
	// Models lists the names of the models the server has, e.g. "airs-tiny:latest".
	Models(ctx context.Context) ([]string, error)
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// Options are the model options AIRS sets. Nil or zero fields are left to
// the server's (or the model's) defaults.
type Options struct {
	Temperature *float64 // 0 is greedy decoding
	Seed        *int
	NumCtx      int // context window in tokens
	NumPredict  int // maximum tokens to generate (-1: unlimited)
	TopK        int
	TopP        *float64
	Stop        []string
	// Extra holds any other Ollama option by its API name.
	Extra map[string]any
}

// Ptr returns a pointer to v, for the optional fields of Options.
func Ptr[T any](v T) *T { return &v }

func (o Options) toMap() map[string]any {
	m := make(map[string]any, len(o.Extra)+6)
	for k, v := range o.Extra {
		m[k] = v
	}
	if o.Temperature != nil {
		m["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		m["seed"] = *o.Seed
	}
	if o.NumCtx != 0 {
		m["num_ctx"] = o.NumCtx
	}
	if o.NumPredict != 0 {
		m["num_predict"] = o.NumPredict
	}
	if o.TopK != 0 {
		m["top_k"] = o.TopK
	}
	if o.TopP != nil {
		m["top_p"] = *o.TopP
	}
	if len(o.Stop) > 0 {
		m["stop"] = o.Stop
	}
	return m
}

// ChatRequest is a chat completion request. It always streams and never
// carries tools.
type ChatRequest struct {
	Model    string
	Messages []Message
	// Format constrains the output: a JSON Schema object, or the JSON string
	// "json" for any JSON value. Nil leaves the output free.
	Format  json.RawMessage
	Options Options
	// KeepAlive is how long the model stays loaded after the request: 0 is
	// the server's default, negative keeps it loaded.
	KeepAlive time.Duration
}

// ChatResponse is the assembled reply.
type ChatResponse struct {
	Model   string
	Content string // the concatenated chunks
	Done    bool   // the server sent its final message
	// DoneReason is the server's reason for stopping: "stop" (end of turn
	// or a stop sequence), "length" (NumPredict reached), ...
	DoneReason      string
	PromptEvalCount int // prompt tokens
	EvalCount       int // generated tokens
	TotalDuration   time.Duration
	LoadDuration    time.Duration
	EvalDuration    time.Duration
	Chunks          int // number of non-empty content chunks received
}

// Config configures an HTTP client.
type Config struct {
	// Host is the server's base URL, e.g. "http://127.0.0.1:11434"; the
	// scheme and port may be left out ("127.0.0.1:11500", "localhost").
	// Empty: OLLAMA_HOST, then DefaultHost.
	Host string
	// HTTPClient, when set, is used as is. Otherwise a client with a
	// DialTimeout is made (and no overall timeout: use contexts).
	HTTPClient *http.Client
	// DialTimeout bounds connecting (default 3s); past it the server counts
	// as unavailable.
	DialTimeout time.Duration
	// DrainLimit bounds how long a reply Chat stopped reading (the chunk
	// callback stopped it, or the caller's context ended) is still read to
	// its end before the connection is closed (default 2m; negative: close
	// at once). Closing mid-stream can wedge the model in Ollama v0.17.4
	// (see Chat), so the default reads on; the price is that the server
	// finishes the abandoned reply (bounded by num_predict) before it
	// serves the next request.
	DrainLimit time.Duration
}

// HTTP is the Client over Ollama's HTTP API.
type HTTP struct {
	base  *url.URL
	http  *http.Client
	api   *api.Client
	drain time.Duration // Config.DrainLimit
}

var _ Client = (*HTTP)(nil)

// New returns an HTTP client for cfg.
func New(cfg Config) (*HTTP, error) {
	host := cfg.Host
	if host == "" {
		host = os.Getenv("OLLAMA_HOST")
	}
	base, err := ParseHost(host)
	if err != nil {
		return nil, err
	}
	hc := cfg.HTTPClient
	if hc == nil {
		dt := cfg.DialTimeout
		if dt <= 0 {
			dt = 3 * time.Second
		}
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = nil // a local server; never through a proxy
		tr.DialContext = (&net.Dialer{Timeout: dt, KeepAlive: 30 * time.Second}).DialContext
		hc = &http.Client{Transport: tr}
	}
	drain := cfg.DrainLimit
	switch {
	case drain == 0:
		drain = defaultDrainLimit
	case drain < 0:
		drain = 0
	}
	return &HTTP{base: base, http: hc, api: api.NewClient(base, hc), drain: drain}, nil
}

// FromEnvironment is New(Config{}): OLLAMA_HOST or DefaultHost.
func FromEnvironment() (*HTTP, error) { return New(Config{}) }

// Host returns the server's base URL.
func (c *HTTP) Host() string { return c.base.String() }

// ParseHost turns an OLLAMA_HOST-style value into a base URL, by the rules
// of Ollama's own envconfig.Host: the scheme defaults to http and the port
// to 11434 — or to 80/443 when a scheme is given — and an empty host is
// 127.0.0.1. "" is DefaultHost.
func ParseHost(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultHost
	}
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return nil, fmt.Errorf("ollama: bad host %q: scheme %q", s, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), defaultPort
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return nil, fmt.Errorf("ollama: bad host %q: port %q", s, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path = strings.Trim(path, "/"); path != "" {
		u.Path = "/" + path
	}
	return u, nil
}

// Ping implements Client.
func (c *HTTP) Ping(ctx context.Context) error {
	_, err := c.Version(ctx)
	return err
}

// Version implements Client.
func (c *HTTP) Version(ctx context.Context) (string, error) {
	v, err := c.api.Version(ctx)
	if err != nil {
		return "", c.classify(ctx, "version", err)
	}
	return v, nil
}

// Models implements Client.
func (c *HTTP) Models(ctx context.Context) ([]string, error) {
	l, err := c.api.List(ctx)
	if err != nil {
		return nil, c.classify(ctx, "list models", err)
	}
	names := make([]string, len(l.Models))
	for i, m := range l.Models {
		names[i] = m.Name
	}
	return names, nil
}

// Embed implements Client.
func (c *HTTP) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	if len(inputs) == 0 {
		return nil, nil
	}
	resp, err := c.api.Embed(ctx, &api.EmbedRequest{Model: model, Input: inputs})
	if err != nil {
		return nil, c.classify(ctx, "embed", err)
	}
	if len(resp.Embeddings) != len(inputs) {
		return nil, fmt.Errorf("ollama: embed: %d vectors for %d inputs", len(resp.Embeddings), len(inputs))
	}
	return resp.Embeddings, nil
}

// Chat implements Client. It streams over its own HTTP loop (rather than
// api.Client.Chat, which ends a cut stream without an error) so that a
// stream that stops before `done` is reported as ErrTruncated.
func (c *HTTP) Chat(ctx context.Context, req ChatRequest, onChunk func(string) error) (ChatResponse, error) {
	out := ChatResponse{Model: req.Model}
	stream := true
	body := api.ChatRequest{
		Model:    req.Model,
		Messages: make([]api.Message, len(req.Messages)),
		Stream:   &stream,
		Format:   req.Format,
		Options:  req.Options.toMap(),
	}
	for i, m := range req.Messages {
		body.Messages[i] = api.Message{Role: m.Role, Content: m.Content}
	}
	if req.KeepAlive != 0 {
		body.KeepAlive = &api.Duration{Duration: req.KeepAlive}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return out, fmt.Errorf("ollama: chat: %w", err)
	}

	// The connection runs in its own goroutine and is never hung up on
	// while Ollama is still sending: a stream the callback stops, or whose
	// caller's ctx ends, is read to its end (bounded by Config.DrainLimit) while
	// Chat returns at once. Ollama v0.17.4 wedges a model when a client
	// leaves mid-stream — its chat handler stops reading while the
	// completion callback, holding the runner's only slot, blocks sending
	// the next chunk, so every later request waits forever.
	st := c.openStream(data)
	defer st.leave()

	var sb strings.Builder
	// Mirror Ollama's repeat guard to explain a stream that ends without done.
	var last string
	repeat := 0
	for {
		var ev streamEvent
		select {
		case ev = <-st.events:
		case <-ctx.Done():
			out.Content = sb.String()
			return out, fmt.Errorf("ollama: chat: %w", ctx.Err())
		}
		switch {
		case ev.resp != nil:
			if ev.resp.StatusCode >= http.StatusBadRequest {
				return out, readServerError(ev.resp)
			}
			continue
		case ev.err != nil && ev.line == nil && !ev.end:
			return out, c.classify(ctx, "chat", ev.err) // the request failed
		case ev.end:
			out.Content = sb.String()
			if ev.err != nil {
				return out, fmt.Errorf("%w: %v", ErrTruncated, ev.err)
			}
			if repeat >= 30 {
				return out, fmt.Errorf("%w: %w", ErrTruncated, ErrRepeatLimit)
			}
			return out, fmt.Errorf("%w: stream ended before done", ErrTruncated)
		}
		line := bytes.TrimSpace(ev.line)
		if len(line) == 0 {
			continue
		}
		var msg struct {
			api.ChatResponse
			Error string `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			// a line cut mid-way: a dropped connection
			out.Content = sb.String()
			return out, fmt.Errorf("%w: bad line %.80q: %v", ErrTruncated, line, err)
		}
		if msg.Error != "" {
			out.Content = sb.String()
			return out, &ServerError{Message: msg.Error}
		}
		if chunk := msg.Message.Content; chunk != "" {
			if t := strings.TrimSpace(chunk); t == last {
				repeat++
			} else {
				last, repeat = t, 0
			}
			sb.WriteString(chunk)
			out.Chunks++
			if onChunk != nil {
				if err := onChunk(chunk); err != nil {
					out.Content = sb.String()
					return out, err // (the rest is read unseen: leave)
				}
			}
		}
		if msg.Done {
			out.Content = sb.String()
			out.Done = true
			out.DoneReason = msg.DoneReason
			out.PromptEvalCount = msg.PromptEvalCount
			out.EvalCount = msg.EvalCount
			out.TotalDuration = msg.TotalDuration
			out.LoadDuration = msg.LoadDuration
			out.EvalDuration = msg.EvalDuration
			if msg.Model != "" {
				out.Model = msg.Model
			}
			return out, nil
		}
	}
}

const defaultDrainLimit = 2 * time.Minute

// streamEvent is what the connection goroutine reports: the response (its
// status), a line, or the end (err: the request or the read failed).
type streamEvent struct {
	resp *http.Response
	line []byte
	end  bool
	err  error
}

type chatStream struct {
	events chan streamEvent
	left   chan struct{}
	cancel context.CancelFunc // hangs up
	drain  time.Duration
}

// openStream posts a chat request and reads its stream in a goroutine,
// reporting on events until leave; after leave it reads the rest unseen,
// to the end of the reply or for Config.DrainLimit, then closes the
// connection.
func (c *HTTP) openStream(data []byte) *chatStream {
	ctx, cancel := context.WithCancel(context.Background())
	st := &chatStream{events: make(chan streamEvent), left: make(chan struct{}), cancel: cancel, drain: c.drain}
	go func() {
		defer cancel()
		leaving := false
		// send reports ev unless Chat has left
		send := func(ev streamEvent) bool {
			if !leaving {
				select {
				case st.events <- ev:
					return true
				case <-st.left:
					leaving = true
				}
			}
			return false
		}
		hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base.JoinPath("/api/chat").String(), bytes.NewReader(data))
		if err != nil {
			send(streamEvent{err: err})
			return
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "application/x-ndjson")
		resp, err := c.http.Do(hreq)
		if err != nil {
			send(streamEvent{err: err})
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode >= http.StatusBadRequest {
			send(streamEvent{resp: resp}) // Chat reads the body
			<-st.left
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			if leaving {
				if bytes.Contains(sc.Bytes(), []byte(`"done":true`)) {
					return
				}
				continue
			}
			send(streamEvent{line: bytes.Clone(sc.Bytes())})
		}
		send(streamEvent{end: true, err: sc.Err()})
	}()
	return st
}

// leave tells the connection goroutine that Chat returned, and starts the
// drain's clock: past it the connection is hung up on anyway.
func (st *chatStream) leave() {
	close(st.left)
	if st.drain <= 0 {
		st.cancel()
		return
	}
	time.AfterFunc(st.drain, st.cancel)
}

// readServerError reads an error response's body: {"error": "..."} or text.
func readServerError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		msg = e.Error
	}
	if msg == "" {
		msg = resp.Status
	}
	return &ServerError{StatusCode: resp.StatusCode, Message: msg}
}

// classify maps a transport or api error to this package's errors.
func (c *HTTP) classify(ctx context.Context, op string, err error) error {
	var se api.StatusError
	if errors.As(err, &se) {
		msg := se.ErrorMessage
		if msg == "" {
			msg = se.Status
		}
		return &ServerError{StatusCode: se.StatusCode, Message: msg}
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		return &ServerError{StatusCode: ae.StatusCode, Message: cmpOr(ae.Status, "unauthorized")}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("ollama: %s: %w", op, ctx.Err())
	}
	if unreachable(err) {
		return fmt.Errorf("%w at %s: %w", ErrUnavailable, c.base, err)
	}
	return fmt.Errorf("ollama: %s: %w", op, err)
}

// unreachable reports whether err means no server answers: a failed dial,
// an unknown host, or a connection refused or reset before any response.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Load asks the server to load model into memory and keep it loaded for
// keepAlive after (0: the server's default, 5 minutes; negative: until it
// is told otherwise): a chat with no messages, which Ollama answers with
// "done_reason":"load" once the model is in memory. It returns how long
// the request took, which is the model's load time when it was not
// loaded yet. A warm-up, so that the first real request does not pay it:
// opts must carry the options that decide how the model is loaded as the
// real requests will (NumCtx above all), or Ollama loads it again for them.
func Load(ctx context.Context, c Client, model string, keepAlive time.Duration, opts Options) (time.Duration, error) {
	start := time.Now()
	resp, err := c.Chat(ctx, ChatRequest{Model: model, KeepAlive: keepAlive, Options: opts}, nil)
	if err != nil {
		return time.Since(start), fmt.Errorf("loading %s: %w", model, err)
	}
	if resp.DoneReason != "load" {
		return time.Since(start), fmt.Errorf("loading %s: the server answered %q, not \"load\" (not an Ollama server?)", model, resp.DoneReason)
	}
	return time.Since(start), nil
}
