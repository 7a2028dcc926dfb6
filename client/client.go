// Package client is the Go SDK for airlock: create throwaway sandboxes, run
// commands in them, move files in and out, and query the audit log, over
// the daemon's HTTP API (a unix socket by default, or TCP).
//
//	c, err := client.FromEnv()
//	sbx, err := c.CreateSandbox(ctx, client.CreateOptions{Template: "legal-doc-review", TTLSeconds: 300,
//		Metadata: map[string]string{"matter": matterID, "doc": docID}})
//	defer sbx.Kill(context.WithoutCancel(ctx))
//	_, err = sbx.Files().Write(ctx, "/job/in.pdf", bytes.NewReader(pdf))
//	res, err := sbx.Exec(ctx, "python3 /opt/review/review_contract.py /job/in.pdf", client.WithTimeout(3*time.Minute))
//	findings, err := sbx.Files().ReadAll(ctx, "/job/out/findings.json")
//
// Errors from the server are *Error values that unwrap to the class
// sentinels below, so errors.Is(err, client.ErrNotFound) tells a missing
// (or another tenant's) sandbox from anything else.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/wire"
)

// DefaultURL is where the daemon listens unless told otherwise.
const DefaultURL = "unix:///run/airlock/airlock.sock"

// Error classes, identical to the server's: errors.Is(err, ErrNotFound).
var (
	ErrNotFound           = errdefs.ErrNotFound
	ErrInvalidArgument    = errdefs.ErrInvalidArgument
	ErrAlreadyExists      = errdefs.ErrAlreadyExists
	ErrFailedPrecondition = errdefs.ErrFailedPrecondition
	ErrDeadlineExceeded   = errdefs.ErrDeadlineExceeded
	ErrResourceExhausted  = errdefs.ErrResourceExhausted
	ErrPermissionDenied   = errdefs.ErrPermissionDenied
	ErrUnavailable        = errdefs.ErrUnavailable
	ErrInternal           = errdefs.ErrInternal
)

// ErrEgressOpen refines ErrFailedPrecondition: a sandbox's egress
// self-check found a way out (CreateOptions.Probe, Sandbox.Probe), so
// nothing should be sent into it. errors.Is(err, ErrEgressOpen).
var ErrEgressOpen = errdefs.ErrEgressOpen

// Error is an error answered by the server.
type Error struct {
	Status  int    // HTTP status
	Code    string // stable code: "not_found", "invalid_argument", ...
	Message string
	// Reason refines Code for failures a caller decides on: "egress_open"
	// (ErrEgressOpen) when a sandbox's egress self-check found a way out.
	Reason string
}

// Error is the server's message; the class is in Code (and errors.Is), so
// callers that print both do not repeat it.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the class sentinel for Code (and the reason's, if any),
// so errors.Is works for both.
func (e *Error) Unwrap() []error {
	if r := errdefs.FromReason(e.Reason); r != nil {
		return []error{errdefs.FromCode(e.Code), r}
	}
	return []error{errdefs.FromCode(e.Code)}
}

// Client talks to one airlock daemon. It is safe for concurrent use.
type Client struct {
	addr   string       // the daemon's address as given, for messages; immutable
	base   *url.URL     // scheme://host[/prefix], no trailing slash; immutable
	hc     *http.Client // immutable
	apiKey string       // immutable
	ua     string       // immutable
	// retries: how many times a refused call is sent again (see
	// WithRetries); immutable.
	retries int
	// header is added to every request (WithHeader); immutable.
	header http.Header
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient replaces the HTTP client (its transport is used as is; for
// a unix URL, its transport must dial the socket itself).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.ua = ua } }

// WithHeader adds a header to every request the client sends (a proxy's
// routing header, say). Authorization, Content-Type and User-Agent are
// the client's own and cannot be set this way.
func WithHeader(name, value string) Option {
	return func(c *Client) {
		if c.header == nil {
			c.header = http.Header{}
		}
		c.header.Add(name, value)
	}
}

// DefaultRetries is how many times a refused call is sent again unless
// WithRetries says otherwise.
const DefaultRetries = 3

// WithRetries sets how many times a call the daemon refused is sent
// again: 429 (resource_exhausted: the call was refused before anything
// was done, say the tenant's concurrent-exec limit) for any method, and
// 503 (unavailable: a sandbox still being re-attached after a restart)
// for GET, PUT and DELETE only, since a POST that failed half-way must
// not run twice. Waits grow from 200 ms (doubling, with jitter, at most
// 5 s) or follow the daemon's Retry-After, within the call's context. A
// call whose body is a stream (a file upload) is never sent again. 0 turns
// retries off.
func WithRetries(n int) Option { return func(c *Client) { c.retries = max(n, 0) } }

// New returns a client for the daemon at rawURL: "unix:///path/to.sock"
// (or a bare absolute socket path) or "http(s)://host:port[/prefix]".
func New(rawURL, apiKey string, opts ...Option) (*Client, error) {
	c := &Client{addr: rawURL, apiKey: apiKey, ua: "airlock-go", retries: DefaultRetries}
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	switch {
	case strings.HasPrefix(rawURL, "unix:") || strings.HasPrefix(rawURL, "/"):
		sock := strings.TrimPrefix(strings.TrimPrefix(rawURL, "unix:"), "//")
		if !strings.HasPrefix(sock, "/") {
			return nil, fmt.Errorf("airlock url %q: want unix:///absolute/path.sock: %w", rawURL, ErrInvalidArgument)
		}
		c.base = &url.URL{Scheme: "http", Host: "airlock"}
		dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}
	default:
		u, err := url.Parse(rawURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("airlock url %q: want unix:///path.sock or http://host:port: %w", rawURL, ErrInvalidArgument)
		}
		u.Path = strings.TrimSuffix(u.Path, "/")
		u.RawQuery, u.Fragment = "", ""
		c.base = u
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if dial != nil {
		tr.DialContext = dial
		tr.Proxy = nil
	}
	// No overall timeout: execs and transfers run as long as their context
	// allows.
	c.hc = &http.Client{Transport: tr}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// FromEnv returns a client configured by AIRLOCK_URL (default DefaultURL)
// and AIRLOCK_API_KEY.
func FromEnv(opts ...Option) (*Client, error) {
	u := os.Getenv("AIRLOCK_URL")
	if u == "" {
		u = DefaultURL
	}
	return New(u, os.Getenv("AIRLOCK_API_KEY"), opts...)
}

// request is one API call.
type request struct {
	method   string
	path     string
	query    url.Values
	body     io.Reader // raw body, or
	jsonBody any       // a value to send as JSON
	ctype    string
	length   int64       // of body, -1 unknown
	header   http.Header // added to this request only
}

// do sends req, again while the daemon refuses it in a way worth waiting
// out (see WithRetries), and returns the response if its status is 2xx;
// otherwise the decoded *Error.
func (c *Client) do(ctx context.Context, req request) (*http.Response, error) {
	replayable := req.body == nil // JSON bodies are encoded afresh each time
	for attempt := 0; ; attempt++ {
		res, err := c.send(ctx, req)
		if err != nil || res.StatusCode >= 200 && res.StatusCode < 300 {
			return res, err
		}
		if !replayable || attempt >= c.retries || !retryable(req.method, res.StatusCode) {
			defer res.Body.Close()
			return nil, decodeError(res)
		}
		wait := backoff(attempt, res.Header.Get("Retry-After"))
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("airlock: %s %s: %w", req.method, req.path, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// retryable: the daemon refused the call without doing it (429), or is
// briefly unavailable for a call that is safe to repeat (503).
func retryable(method string, status int) bool {
	switch status {
	case http.StatusTooManyRequests:
		return true
	case http.StatusServiceUnavailable:
		return method == http.MethodGet || method == http.MethodPut || method == http.MethodDelete
	}
	return false
}

// backoff is the wait before retry attempt+1: the daemon's Retry-After
// (seconds) when it gives one, else 200 ms doubling, with up to 50%
// jitter, at most 5 s.
func backoff(attempt int, retryAfter string) time.Duration {
	if s, err := strconv.Atoi(strings.TrimSpace(retryAfter)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, 30*time.Second)
	}
	d := min(200*time.Millisecond<<attempt, 5*time.Second)
	return d + time.Duration(rand.Int64N(int64(d/2)+1))
}

// send makes one HTTP exchange; any status is returned as a response.
func (c *Client) send(ctx context.Context, req request) (*http.Response, error) {
	u := *c.base
	u.Path += req.path
	u.RawQuery = req.query.Encode()
	body := req.body
	ctype := req.ctype
	length := req.length
	if req.jsonBody != nil {
		b, err := json.Marshal(req.jsonBody)
		if err != nil {
			return nil, fmt.Errorf("airlock: encode request: %w", err)
		}
		body, ctype, length = bytes.NewReader(b), "application/json", int64(len(b))
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("airlock: %w", err)
	}
	if body != nil && length >= 0 {
		hr.ContentLength = length
	}
	for k, vs := range c.header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range req.header {
		hr.Header[k] = append([]string(nil), vs...)
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	if c.apiKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	hr.Header.Set("User-Agent", c.ua)
	res, err := c.hc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("airlock: %s %s: %w", req.method, req.path, ctx.Err())
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the dial error; the URL is a placeholder for unix sockets
		}
		return nil, fmt.Errorf("airlock: cannot reach the daemon at %s (%s %s): %w: %w", c.addr, req.method, req.path, ErrUnavailable, err)
	}
	return res, nil
}

func decodeError(res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var er wire.ErrorResponse
	if json.Unmarshal(b, &er) != nil || er.Error.Code == "" {
		// Not airlock's shape (a proxy in between?): classify by status,
		// with the table the API and the Python SDK use.
		return &Error{Status: res.StatusCode, Code: errdefs.CodeForHTTPStatus(res.StatusCode), Message: strings.TrimSpace(res.Status)}
	}
	return &Error{Status: res.StatusCode, Code: er.Error.Code, Message: er.Error.Message, Reason: er.Error.Reason}
}

// doJSON sends req and decodes a JSON answer into out (nil: discard).
func (c *Client) doJSON(ctx context.Context, req request, out any) error {
	res, err := c.do(ctx, req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, res.Body)
		return nil
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("airlock: decode %s %s answer: %w", req.method, req.path, err)
	}
	return nil
}

// Health checks that the daemon answers.
func (c *Client) Health(ctx context.Context) error {
	return c.doJSON(ctx, request{method: "GET", path: "/healthz"}, nil)
}

// Templates lists the templates sandboxes can be created from.
func (c *Client) Templates(ctx context.Context) ([]Template, error) {
	var out struct {
		Templates []Template `json:"templates"`
	}
	err := c.doJSON(ctx, request{method: "GET", path: "/v1/templates"}, &out)
	return out.Templates, err
}

// Template describes one template.
func (c *Client) Template(ctx context.Context, name string) (*Template, error) {
	var out Template
	if err := c.doJSON(ctx, request{method: "GET", path: "/v1/templates/" + url.PathEscape(name)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Template describes a baked template; AuditRecord is one audit log
// entry (ids, metadata, outcome and sizes, never content); Key is one of
// the caller's tenant's API keys as the daemon lists it (never the key
// itself, which is shown once, at creation).
type (
	Template    = wire.TemplateInfo
	AuditRecord = wire.AuditRecord
	Key         = wire.Key
)

// AuditFilter selects audit records; zero fields match everything.
type AuditFilter struct {
	SandboxID string
	Metadata  map[string]string
	Since     time.Time
	Until     time.Time
	Events    []string
	Limit     int   // 0 = the server's default page (1000)
	AfterSeq  int64 // paging cursor: the last Seq already seen
}

// Audit returns the caller's tenant's audit records matching f, oldest
// first, one page at a time (pass the last Seq as AfterSeq for the next).
func (c *Client) Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	q := metadataQuery(f.Metadata)
	if f.SandboxID != "" {
		q.Set("sandbox", f.SandboxID)
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.UTC().Format(time.RFC3339Nano))
	}
	for _, e := range f.Events {
		q.Add("event", e)
	}
	if f.Limit > 0 {
		q.Set("limit", fmt.Sprint(f.Limit))
	}
	if f.AfterSeq > 0 {
		q.Set("after_seq", fmt.Sprint(f.AfterSeq))
	}
	var out struct {
		Records []AuditRecord `json:"records"`
	}
	err := c.doJSON(ctx, request{method: "GET", path: "/v1/audit", query: q}, &out)
	return out.Records, err
}

func metadataQuery(md map[string]string) url.Values {
	q := url.Values{}
	for k, v := range md {
		q.Set("metadata."+k, v)
	}
	return q
}

// IsNotFound reports whether err is (or wraps) a not_found error.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Keys lists the caller's tenant's API keys, revoked ones included.
// Creating and revoking keys is done on the daemon's host (`airlock key`).
func (c *Client) Keys(ctx context.Context) ([]Key, error) {
	var out struct {
		Keys []Key `json:"keys"`
	}
	err := c.doJSON(ctx, request{method: "GET", path: "/v1/keys"}, &out)
	return out.Keys, err
}
