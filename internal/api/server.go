package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// Defaults for Config's limits.
const (
	DefaultMaxUploadBytes = 512 << 20
	DefaultMaxReadBytes   = 512 << 20
	// maxJSONBody bounds every JSON request body (exec stdin included;
	// bigger inputs go through the files routes, which stream).
	maxJSONBody = 1 << 20
	// maxPlainOutput bounds each stream of a non-streaming exec, whose
	// output the server holds in memory; exec/stream has no such cap.
	maxPlainOutput = 16 << 20
	// defaultPlainOutput is the agent's own default per-stream cap.
	defaultPlainOutput = 4 << 20
	// maxExecTimeout bounds timeout_seconds (sandbox TTLs bound it anyway).
	maxExecTimeout = 24 * time.Hour
)

// Store is what the API needs of the state store: API keys and the audit
// log. *store.Store (one host, SQLite) satisfies it; a cluster's shared
// store can too. Every method is read-only: creating and revoking keys
// and appending audit records happen elsewhere.
type Store interface {
	// AuthenticateKey returns the valid key whose plaintext is given;
	// unknown, malformed and revoked keys are PermissionDenied.
	AuthenticateKey(ctx context.Context, plaintext string) (store.Key, error)
	// ListKeys returns tenant's keys ("" = every tenant's), revoked ones
	// included, oldest first.
	ListKeys(ctx context.Context, tenant string) ([]store.Key, error)
	// QueryAudit returns the records matching f in the store's order;
	// TenantSeq is a tenant's paging cursor.
	QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error)
}

var _ Store = (*store.Store)(nil)

// Config configures the handler. Backend and Store are required.
type Config struct {
	Backend Backend
	Store   Store        // API keys and the audit log
	Logger  *slog.Logger // nil = slog.Default()
	// MaxUploadBytes bounds one file upload; 0 = DefaultMaxUploadBytes.
	MaxUploadBytes int64
	// MaxReadBytes bounds one file download; 0 = DefaultMaxReadBytes,
	// negative = no limit.
	MaxReadBytes int64
	// Metrics receives per-request counters and is served at /metrics;
	// nil = a private set, so /metrics still answers.
	Metrics *metrics.Metrics
	// Admission bounds the requests each tenant, and all of them, hold
	// at once; zero fields take the defaults.
	Admission Admission
	// MCP, when set, serves /mcp (POST, GET, DELETE) after the API has
	// authenticated the key and admitted the request; it finds the caller
	// with CallerFrom. nil: /mcp answers 404.
	MCP http.Handler
	// Ready, when set, answers GET /readyz: nil while the process can
	// serve sandbox calls, else why not (an Unavailable error answers
	// 503). nil: ready whenever it serves.
	Ready func(context.Context) error
}

// server holds the handler's dependencies; immutable after New.
type server struct {
	be        Backend
	st        Store
	log       *slog.Logger
	m         *metrics.Metrics
	maxUpload int64
	maxRead   int64 // 0 = no limit (passed to the agent as such)
	mux       *http.ServeMux
	adm       *admitter
	mcpH      http.Handler // nil = no MCP endpoint
	ready     func(context.Context) error

	execMu     sync.Mutex
	plainExecs map[string]int // guarded by execMu; running non-streaming execs per tenant
}

// New returns the API handler. It panics if Backend or Store is nil: a
// server that cannot authenticate must not start.
func New(cfg Config) http.Handler {
	if cfg.Backend == nil || cfg.Store == nil {
		panic("api.New: Config.Backend and Config.Store are required")
	}
	if st, ok := cfg.Store.(*store.Store); ok && st == nil {
		// A nil *store.Store in the interface is not nil, and would
		// fail on the first request rather than here.
		panic("api.New: Config.Store is a nil *store.Store")
	}
	s := &server{
		be: cfg.Backend, st: cfg.Store, log: cfg.Logger, m: cfg.Metrics,
		maxUpload: cfg.MaxUploadBytes, maxRead: cfg.MaxReadBytes,
		mux: http.NewServeMux(), plainExecs: map[string]int{}, adm: newAdmitter(cfg.Admission), mcpH: cfg.MCP, ready: cfg.Ready,
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.m == nil {
		s.m = metrics.New()
	}
	if s.maxUpload <= 0 {
		s.maxUpload = DefaultMaxUploadBytes
	}
	switch {
	case s.maxRead == 0:
		s.maxRead = DefaultMaxReadBytes
	case s.maxRead < 0:
		s.maxRead = 0
	}
	for _, rt := range routes {
		s.mux.Handle(rt.pattern, s.wrap(rt))
	}
	return http.HandlerFunc(s.serveHTTP)
}

// serveHTTP answers unmatched requests with the JSON error shape instead of
// the mux's text/plain 404 and 405.
func (s *server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// Let the mux decide between 404 and 405 (and the Allow header) without
	// sending its body.
	probe := &headerProbe{header: http.Header{}}
	h.ServeHTTP(probe, r)
	rw := &respWriter{ResponseWriter: w}
	var err error
	switch probe.status {
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", probe.header.Get("Allow"))
		err = withStatus(http.StatusMethodNotAllowed, errdefs.InvalidArgument("method %s not allowed here", r.Method))
	default:
		err = errdefs.NotFound("no route for %s %s", r.Method, r.URL.Path)
	}
	start := time.Now()
	writeError(rw, err)
	s.finish(r, rw, "unmatched", &call{}, start, err)
}

// headerProbe records what a handler would answer without a body.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) {
	if p.status == 0 {
		p.status = http.StatusOK
	}
	return len(b), nil
}
func (p *headerProbe) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

// call is what the wrapper learned about a request before its handler ran.
type call struct {
	tenant  string // from the key; "" on routes without auth
	keyID   string // the key's id; "" on routes without auth
	id      string // the {id} path value, validated; "" when none
	bytesIn *countingReader
}

// handlerFunc is a route's handler. A returned error is written as the JSON
// error shape if nothing has been written yet; after the first byte of a
// response the connection is aborted instead, so the client sees a broken
// body, never a silently short one.
type handlerFunc func(s *server, w *respWriter, r *http.Request, c *call) error

// wrap adds, around every route: panic recovery, authentication, path
// parameter validation, logging and metrics.
func (s *server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(hw http.ResponseWriter, r *http.Request) {
		start := time.Now()
		w := &respWriter{ResponseWriter: hw}
		c := &call{}
		if r.Body != nil && r.Body != http.NoBody {
			// Count on a shallow copy: the server must keep seeing its own
			// body type, or after the handler it tries to drain an unread
			// upload instead of closing the connection.
			c.bytesIn = &countingReader{r: r.Body}
			r = r.WithContext(r.Context())
			r.Body = c.bytesIn
		}
		reqID := newRequestID()
		w.Header().Set("X-Request-Id", reqID)
		var err error
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				// The panic value is not logged: it could quote a request.
				s.log.Error("api handler panic", "route", rt.pattern, "request_id", reqID, "stack", string(debug.Stack()))
				err = errdefs.New(errdefs.ErrInternal, "internal error (request %s)", reqID)
			}
			if err != nil && !w.started() {
				writeError(w, err)
			}
			s.finish(r, w, rt.pattern, c, start, err, "request_id", reqID)
			if err != nil && w.status < 400 {
				// The response had begun: cut the connection so the client
				// cannot take a partial body for a whole one.
				panic(http.ErrAbortHandler)
			}
		}()
		if err = s.prepare(rt, r, c); err != nil {
			if errdefs.Class(err) == errdefs.ErrPermissionDenied {
				w.Header().Set("Connection", "close") // a bad key holds nothing open
			}
			return
		}
		if c.tenant != "" {
			release, aerr := s.adm.admit(c.tenant, classify(rt.pattern, r))
			if aerr != nil {
				// Refused: nothing held, not even the connection.
				w.Header().Set("Retry-After", refusedRetryAfter)
				w.Header().Set("Connection", "close")
				err = aerr
				return
			}
			defer release()
		}
		err = rt.handle(s, w, r, c)
	})
}

// finish logs one request and counts it.
func (s *server) finish(r *http.Request, w *respWriter, route string, c *call, start time.Time, err error, extra ...any) {
	status := w.status
	if status == 0 {
		status = http.StatusOK
	}
	if err != nil && status < 400 {
		status = 499 // aborted midway; logged as such, never sent
	}
	s.m.HTTPRequest(route, status)
	if err != nil {
		s.m.Error(err)
	}
	level := slog.LevelInfo
	switch {
	case status >= 500:
		level = slog.LevelError
	case route == "GET /healthz" || route == "GET /metrics":
		level = slog.LevelDebug
	}
	if !s.log.Enabled(r.Context(), level) {
		return
	}
	var in int64
	if c.bytesIn != nil {
		in = c.bytesIn.n
	}
	attrs := []any{
		"method", r.Method, "route", route, "status", status,
		"duration_ms", time.Since(start).Milliseconds(), "bytes_in", in, "bytes_out", w.bytes,
	}
	if c.tenant != "" {
		attrs = append(attrs, "tenant", c.tenant)
	}
	if c.id != "" {
		attrs = append(attrs, "sandbox", c.id)
	}
	if err != nil {
		// The code only: messages may quote guest paths.
		attrs = append(attrs, "error_code", errdefs.Code(err))
	}
	attrs = append(attrs, extra...)
	s.log.Log(r.Context(), level, "api request", attrs...)
}

// idRE is the shape of sandbox ids in paths.
var idRE = regexp.MustCompile(`^[a-z0-9-]{1,64}$`)

// templateNameRE matches store's template names.
var templateNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// prepare authenticates and validates path parameters.
func (s *server) prepare(rt route, r *http.Request, c *call) error {
	if rt.auth {
		k, err := s.authenticate(r)
		if err != nil {
			return err
		}
		c.tenant, c.keyID = k.Tenant, k.ID
	}
	if id := r.PathValue("id"); strings.Contains(rt.pattern, "{id}") {
		if !idRE.MatchString(id) {
			return errdefs.InvalidArgument("invalid sandbox id %q: want [a-z0-9-]{1,64}", id)
		}
		c.id = id
	}
	if strings.Contains(rt.pattern, "{pid}") {
		if pid := r.PathValue("pid"); !pidRE.MatchString(pid) {
			return errdefs.InvalidArgument("invalid process id %q: want p-N", pid)
		}
	}
	if strings.Contains(rt.pattern, "{name}") {
		if name := r.PathValue("name"); !templateNameRE.MatchString(name) {
			return errdefs.InvalidArgument("invalid template name %q", name)
		}
	}
	return nil
}

// authenticate returns the request's bearer key.
func (s *server) authenticate(r *http.Request) (store.Key, error) {
	h := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(h, " ")
	if h == "" || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(key) == "" {
		return store.Key{}, withStatus(http.StatusUnauthorized,
			errdefs.PermissionDenied("missing API key: send Authorization: Bearer alk_..."))
	}
	k, err := s.st.AuthenticateKey(r.Context(), strings.TrimSpace(key))
	if err != nil {
		if errdefs.Class(err) == errdefs.ErrPermissionDenied {
			return store.Key{}, withStatus(http.StatusUnauthorized, errdefs.PermissionDenied("invalid or revoked API key"))
		}
		return store.Key{}, err
	}
	return k, nil
}

// checkTenant is the second line of tenant isolation: an Info of another
// tenant from the Backend is a Backend bug, and must still read as missing.
func checkTenant(tenant string, infos ...sandbox.Info) error {
	for _, in := range infos {
		if in.Tenant != tenant {
			return errdefs.NotFound("sandbox %s not found", in.ID)
		}
	}
	return nil
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// respWriter remembers the status and counts bytes. It unwraps, so
// http.ResponseController can flush through it.
type respWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *respWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *respWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *respWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *respWriter) started() bool { return w.status != 0 }

type countingReader struct {
	r io.ReadCloser
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

// writeJSON sends v with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

func writeError(w http.ResponseWriter, err error) {
	status, _ := errorStatus(err)
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="airlock"`)
	}
	_ = writeJSON(w, status, errorBody(err))
}

// decodeJSON reads a JSON request body into v: at most maxJSONBody bytes,
// unknown fields refused, exactly one value. An empty body decodes as {}.
func decodeJSON(w *respWriter, r *http.Request, v any) error {
	// The unwrapped writer: MaxBytesReader tells it to close the
	// connection once the limit is hit.
	body := http.MaxBytesReader(w.ResponseWriter, r.Body, maxJSONBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return err
		case errors.Is(err, io.EOF):
			return nil
		}
		return errdefs.InvalidArgument("malformed JSON body: %s", jsonErrText(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errdefs.InvalidArgument("malformed JSON body: more than one value")
	}
	return nil
}

// jsonErrText describes a decode error without quoting the body.
func jsonErrText(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: want %s, got %s", te.Field, te.Type, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected end of body"
	}
	// Includes `json: unknown field "x"`: the field name is the caller's
	// own key, which is what they need to see.
	return strings.TrimPrefix(err.Error(), "json: ")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// ctxErr prefers the context's reason when a call failed because the client
// went away.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil && errdefs.Class(err) == errdefs.ErrInternal {
		return fmt.Errorf("%w: %w", errdefs.Unavailable("request canceled"), err)
	}
	return err
}
