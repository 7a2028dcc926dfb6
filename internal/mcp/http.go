package mcp

import (
	"context"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPConfig configures the daemon's /mcp handler.
type HTTPConfig struct {
	// Caller returns the tenant and key id of a request the API has
	// authenticated (api.CallerFrom); ok is false for any other request.
	Caller func(r *http.Request) (tenant, keyID string, ok bool)
	// Backend returns the Backend of tenant (ManagerBackend).
	Backend func(tenant string) Backend
	// Options are every session's. DocsRoot here is a directory of
	// tenants' docs roots: a session of tenant T reads documents under
	// DocsRoot/T only (none if that is not a directory), never another
	// tenant's.
	Options Options
	// IdleTimeout ends a session (killing its sandboxes) that has made no
	// request for this long; default 30 minutes.
	IdleTimeout time.Duration
}

// HTTPHandler serves MCP's streamable HTTP transport. Each session has a
// server of its own over its tenant's Backend, and belongs to the key
// that opened it: a request of another key naming it is refused.
type HTTPHandler struct {
	cfg  HTTPConfig
	opts Options      // cfg.Options with defaults; immutable
	h    http.Handler // the SDK's handler behind the key binding; immutable

	mu     sync.Mutex
	live   map[*session]bool // guarded by mu; sessions that have initialized and not ended
	closed bool              // guarded by mu; no new sessions once true
}

// maxHTTPBody bounds one POST: the largest document as base64, and some.
func (o Options) maxHTTPBody() int64 { return o.MaxDocumentBytes/3*4 + 1<<20 }

// NewHTTPHandler returns the handler; Close ends its sessions.
func NewHTTPHandler(cfg HTTPConfig) *HTTPHandler {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 30 * time.Minute
	}
	h := &HTTPHandler{cfg: cfg, opts: cfg.Options.withDefaults(), live: map[*session]bool{}}
	streamable := sdk.NewStreamableHTTPHandler(h.serverFor, &sdk.StreamableHTTPOptions{
		SessionTimeout: cfg.IdleTimeout, MaxRequestBodyBytes: h.opts.maxHTTPBody(), Logger: h.opts.Logger,
	})
	// The SDK binds a session to the TokenInfo's UserID of the request
	// that opened it and refuses (403) any later request of another: here,
	// the API key's id. The key itself was checked by the API already.
	bind := auth.RequireBearerToken(func(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
		tenant, keyID, ok := cfg.Caller(r)
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: keyID, Extra: map[string]any{"tenant": tenant}}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	h.h = bind(streamable)
	return h
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// serverFor gives a request that opens a session the server of a new
// session of its tenant. Requests of an existing session never use what
// it returns but for the protocol versions, so they get nil (the SDK's
// defaults then, which are checked again against the session's server).
func (h *HTTPHandler) serverFor(r *http.Request) *sdk.Server {
	if r.Header.Get("Mcp-Session-Id") != "" {
		return nil
	}
	tenant, _, ok := h.cfg.Caller(r)
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if !ok || closed {
		return nil
	}
	opts := h.opts
	opts.DocsRoot = tenantDocsRoot(h.opts.DocsRoot, tenant)
	srv, _ := newServer(h.cfg.Backend(tenant), &opts, h.started)
	return srv
}

// tenantDocsRoot is tenant's directory under base, or "" when there is
// none: a tenant name that is not one plain path element gets none.
func tenantDocsRoot(base, tenant string) string {
	if base == "" || !filepath.IsLocal(tenant) || filepath.Base(tenant) != tenant {
		return ""
	}
	return filepath.Join(base, tenant)
}

// started is told each initialized session: it is watched, so that its
// end kills its sandboxes, and kept until then so Close can end it.
func (h *HTTPHandler) started(s *session, ss *sdk.ServerSession) {
	h.mu.Lock()
	if h.live[s] {
		h.mu.Unlock()
		return
	}
	closed := h.closed
	if !closed {
		h.live[s] = true
	}
	h.mu.Unlock()
	if closed {
		ss.Close()
	}
	s.watch(ss, func() {
		h.mu.Lock()
		delete(h.live, s)
		h.mu.Unlock()
	})
}

// Sessions is how many sessions are live.
func (h *HTTPHandler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.live)
}

// Close ends every live session (its requests and event stream too),
// killing their sandboxes, and refuses new ones: the daemon is stopping,
// and a session cannot outlive it (its state is in this process). It may
// be called more than once.
func (h *HTTPHandler) Close() error {
	h.mu.Lock()
	h.closed = true
	ss := make([]*session, 0, len(h.live))
	for s := range h.live {
		ss = append(ss, s)
	}
	clear(h.live)
	h.mu.Unlock()
	for _, s := range ss {
		s.end()
	}
	if len(ss) > 0 {
		h.opts.Logger.Info("mcp sessions ended with the daemon", "sessions", len(ss))
	}
	return nil
}
