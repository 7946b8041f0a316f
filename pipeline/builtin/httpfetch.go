package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/airs-dev/airs/pipeline"
)

// KindNetwork is the capability to reach a host over the network:
// Network(api.example.org) lets its holder fetch from that host,
// Network(*.example.org) from hosts under it, Network(*) from any.
const KindNetwork = "Network"

// HTTPFetchOptions turns on the http-fetch tool and bounds it. The zero
// value of each field is its default.
type HTTPFetchOptions struct {
	// MaxBytes bounds the response body read (default 1 MiB); a longer
	// body is cut there and the result says so (truncated).
	MaxBytes int64
	// MaxBody bounds a POST body (default 256 KiB).
	MaxBody int
	// Timeout bounds one call, redirects included (default 15 s), inside
	// the pipeline's own budget.
	Timeout time.Duration
	// MaxRedirects bounds the redirects followed (default 5).
	MaxRedirects int
	// AllowPrivate lets the tool dial loopback, private and link-local
	// addresses. Off by default: a host name an agent may reach must not
	// resolve to the machine AIRS runs on or its network (a DNS name
	// pointing at 127.0.0.1 would otherwise turn Network(*.example.org)
	// into a way to call local services). Tests against a loopback server
	// turn it on.
	AllowPrivate bool
	// Transport, when set, replaces the dialing transport (tests). The
	// capability and redirect checks apply either way; AllowPrivate is
	// enforced only by the default transport's dialer.
	Transport http.RoundTripper
}

func (o HTTPFetchOptions) withDefaults() HTTPFetchOptions {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 1 << 20
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 256 << 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = 5
	}
	return o
}

// HTTPFetchTool describes http-fetch: one HTTP GET or POST to a host the
// caller holds Network(host) for. It is neither read-only (a POST sends
// data out) nor destructive; level 2 treats it as a send tool.
func HTTPFetchTool() pipeline.Tool {
	return pipeline.Tool{
		Name:    "http-fetch",
		Version: "1.0.0",
		Description: "Fetch a web page or API response over HTTP(S) with GET, or send data with POST. " +
			"Only hosts the agent may reach (Network(host)) are allowed, redirects included. " +
			"Returns the status, the content type and the body as text (cut at a size limit).",
		Parameters: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"url": {"type": "string", "minLength": 8, "maxLength": 4096, "pattern": "^[hH][tT][tT][pP][sS]?://",
					"description": "The absolute http:// or https:// URL, e.g. https://api.example.org/v1/items."},
				"method": {"enum": ["GET", "POST"], "default": "GET",
					"description": "GET to read, POST to send body."},
				"body": {"type": "string", "maxLength": 262144,
					"description": "The request body of a POST (text)."},
				"content_type": {"type": "string", "maxLength": 200,
					"description": "The body's media type, default text/plain; charset=utf-8."}
			},
			"required": ["url"],
			"additionalProperties": false
		}`),
		ReturnSchema: schema(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"url": {"type": "string"},
				"status": {"type": "integer"},
				"content_type": {"type": "string"},
				"body": {"type": "string"},
				"bytes": {"type": "integer", "minimum": 0},
				"truncated": {"type": "boolean"}
			},
			"required": ["url", "status", "body", "bytes"],
			"additionalProperties": false
		}`),
		Trust:        pipeline.TL3,
		LatencyClass: pipeline.Slow,
	}
}

type httpFetchParams struct {
	URL         string `json:"url"`
	Method      string `json:"method"`
	Body        string `json:"body"`
	ContentType string `json:"content_type"`
}

type httpFetchResult struct {
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type,omitempty"`
	Body        string `json:"body"`
	Bytes       int64  `json:"bytes"`
	Truncated   bool   `json:"truncated,omitempty"`
}

// httpFetcher serves http-fetch.
type httpFetcher struct {
	opts   HTTPFetchOptions
	policy pipeline.AccessPolicy // nil: nobody reaches any host
	client *http.Client
}

// HTTPFetch returns the http-fetch handler. policy answers
// Network(host) for the caller, on the first URL and on every redirect.
func HTTPFetch(opts HTTPFetchOptions, policy pipeline.AccessPolicy) pipeline.Handler {
	f := &httpFetcher{opts: opts.withDefaults(), policy: policy}
	tr := opts.Transport
	if tr == nil {
		d := &net.Dialer{Timeout: 10 * time.Second}
		if !opts.AllowPrivate {
			d.Control = refusePrivate
		}
		tr = &http.Transport{
			Proxy:                 nil, // a proxy would hide the host the capability names
			DialContext:           d.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: f.opts.Timeout,
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
		}
	}
	f.client = &http.Client{Transport: tr}
	return pipeline.HandlerFunc(f.fetch)
}

// refusePrivate runs on the address actually dialed, after resolution, so
// a name that resolves to a local address is refused as the address is.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() {
		return errPrivateAddress{host}
	}
	return nil
}

type errPrivateAddress struct{ ip string }

func (e errPrivateAddress) Error() string {
	return fmt.Sprintf("address %s is loopback, private or link-local: http-fetch does not dial those unless configured to (AllowPrivate)", e.ip)
}

// hostOf is the host a URL reaches, as Network(host) names it: lower case,
// without port or brackets.
func hostOf(u *url.URL) string { return strings.ToLower(u.Hostname()) }

// checkURL refuses a URL that is not http(s) with a host, or whose host the
// caller may not reach.
func (f *httpFetcher) checkURL(u *url.URL, caller string) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return reject(CodeBadParams, "url %q: only http:// and https:// URLs are fetched", u.Redacted())
	}
	if u.User != nil {
		return reject(CodeBadParams, "url %q carries credentials: put none in a URL a model writes", u.Redacted())
	}
	host := hostOf(u)
	if host == "" {
		return reject(CodeBadParams, "url %q has no host", u.Redacted())
	}
	need := pipeline.Capability{Kind: KindNetwork, Arg: host}
	if f.policy == nil || !f.policy.Holds(caller, need) {
		return &pipeline.ToolCapabilityDenied{Required: []pipeline.Capability{need}}
	}
	return nil
}

func (f *httpFetcher) fetch(ctx context.Context, params json.RawMessage, call *pipeline.Call) (json.RawMessage, error) {
	var p httpFetchParams
	if err := decodeParams(ctx, params, &p); err != nil {
		return nil, err
	}
	caller := ""
	if call != nil {
		caller = call.Caller
	}
	u, err := url.Parse(p.URL)
	if err != nil {
		return nil, reject(CodeBadParams, "url: %v", err)
	}
	if err := f.checkURL(u, caller); err != nil {
		return nil, err
	}
	method := p.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	switch method {
	case http.MethodGet:
		if p.Body != "" {
			return nil, reject(CodeBadParams, "a GET sends no body: use method POST to send one")
		}
	case http.MethodPost:
		if len(p.Body) > f.opts.MaxBody {
			return nil, reject(CodeTooLarge, "body is %d bytes, more than the %d http-fetch sends", len(p.Body), f.opts.MaxBody)
		}
		body = strings.NewReader(p.Body)
	default:
		return nil, reject(CodeBadParams, "method %q: want GET or POST", method)
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, reject(CodeBadParams, "url: %v", err)
	}
	if method == http.MethodPost {
		ct := p.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("User-Agent", "airs-http-fetch/1")
	client := *f.client
	// Every hop is checked as the first URL was: a redirect to a host the
	// caller may not reach is refused, not followed.
	var denied error
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) > f.opts.MaxRedirects {
			denied = reject(CodeBadParams, "more than %d redirects from %s", f.opts.MaxRedirects, u.Redacted())
			return denied
		}
		if err := f.checkURL(next.URL, caller); err != nil {
			denied = err
			return err
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		if denied != nil {
			return nil, denied
		}
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			if errors.Is(cerr, context.DeadlineExceeded) && call != nil {
				return nil, reject(CodeIO, "%s did not answer within %s", hostOf(u), f.opts.Timeout)
			}
			return nil, cerr
		}
		var pe errPrivateAddress
		if errors.As(err, &pe) {
			return nil, reject(CodeBadParams, "%s", pe.Error())
		}
		return nil, reject(CodeIO, "%s %s: %v", method, u.Redacted(), unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, f.opts.MaxBytes+1))
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, reject(CodeIO, "reading the answer of %s: %v", hostOf(resp.Request.URL), cerr)
		}
		return nil, reject(CodeIO, "reading the answer of %s: %v", hostOf(resp.Request.URL), err)
	}
	res := httpFetchResult{URL: resp.Request.URL.Redacted(), Status: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Bytes: int64(len(data))}
	if int64(len(data)) > f.opts.MaxBytes {
		data, res.Truncated, res.Bytes = data[:f.opts.MaxBytes], true, f.opts.MaxBytes
	}
	if !utf8.Valid(data) {
		// Invalid bytes become U+FFFD: the result is JSON text, and a
		// binary body is not something a model reads anyway.
		data = []byte(strings.ToValidUTF8(string(data), "\uFFFD"))
	}
	res.Body = string(data)
	return json.Marshal(res)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// NetworkFor is the capability a call of http-fetch needs for its first URL
// (each redirect is checked in the handler): Network(host).
func NetworkFor(params []byte) []pipeline.Capability {
	var p struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(params, &p) != nil {
		return nil
	}
	u, err := url.Parse(p.URL)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	return []pipeline.Capability{{Kind: KindNetwork, Arg: hostOf(u)}}
}
