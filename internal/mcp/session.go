package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/jobs/invoicecheck"
)

// Metadata keys every sandbox of a session carries, and so every audit
// record about it. An agent cannot set keys with this prefix itself.
const (
	MetaPrefix        = "mcp."
	MetaSession       = "mcp.session"
	MetaClient        = "mcp.client"
	MetaClientVersion = "mcp.client_version"
)

// killTimeout bounds the kills at a session's end: it runs after the
// client has gone, so no request context bounds it.
const killTimeout = time.Minute

// session is one MCP session's state: its tenant-bound backend and the
// sandboxes it created. Safe for concurrent use: tool calls of one session
// may run at once.
type session struct {
	id   string   // "mcp-" and 16 hex digits; immutable
	be   Backend  // bound to the session's tenant; immutable
	opts *Options // immutable
	log  *slog.Logger
	// server is the MCP server of this session alone (resources it adds,
	// the review reports, are this session's); set once before use.
	server *sdk.Server
	// seen is called with the SDK's session on every request after
	// initialization; set once before use.
	seen func(*sdk.ServerSession)
	// history is the invoice history of this session (duplicates within
	// it); the host keeps only digests.
	history *invoicecheck.MemoryHistory

	mu      sync.Mutex
	owned   map[string]bool // guarded by mu; every sandbox this session created, ended or not
	reports []string        // guarded by mu; report resource URIs, oldest first
	nReport int             // guarded by mu; reports made, for URIs
	client  clientInfo      // guarded by mu; set once the client has initialized
	closed  bool            // guarded by mu; after close no sandbox is created

	watchOnce sync.Once
	sdkSess   *sdk.ServerSession // set once by watch, before its goroutine starts
}

// clientInfo is what the client declared in its initialize request,
// cleaned to be safe as metadata.
type clientInfo struct{ name, version string }

func newSession(be Backend, opts *Options, log *slog.Logger) *session {
	var b [8]byte
	_, _ = rand.Read(b[:])
	s := &session{id: "mcp-" + hex.EncodeToString(b[:]), be: be, opts: opts,
		owned: map[string]bool{}, history: invoicecheck.NewMemoryHistory()}
	s.log = log.With("mcp_session", s.id)
	return s
}

// noteClient records the client's declared identity from the session's
// initialize parameters, the first time they are seen.
func (s *session) noteClient(ss *sdk.ServerSession) {
	if ss == nil {
		return
	}
	p := ss.InitializeParams()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client.name != "" || p == nil || p.ClientInfo == nil {
		return
	}
	s.client = clientInfo{name: cleanLabel(p.ClientInfo.Name), version: cleanLabel(p.ClientInfo.Version)}
	s.log.Info("mcp session initialized", "mcp_client", s.client.name, "mcp_client_version", s.client.version,
		"protocol", p.ProtocolVersion)
}

// cleanLabel makes a client-declared string fit for metadata and logs:
// printable, at most 64 bytes, "unknown" when empty.
func cleanLabel(v string) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, strings.TrimSpace(v))
	if len(v) > 64 {
		v = strings.ToValidUTF8(v[:64], "") // a rune cut in two is dropped
	}
	if v == "" {
		return "unknown"
	}
	return v
}

// metadata is what every sandbox of the session carries beside the
// agent's own labels.
func (s *session) metadata(agent map[string]string) (map[string]string, error) {
	md := map[string]string{}
	for k, v := range agent {
		if strings.HasPrefix(k, MetaPrefix) {
			return nil, errdefs.InvalidArgument("metadata key %q: keys starting %q are airlock's own", k, MetaPrefix)
		}
		md[k] = v
	}
	s.mu.Lock()
	c := s.client
	s.mu.Unlock()
	if c.name == "" {
		c = clientInfo{name: "unknown", version: "unknown"}
	}
	md[MetaSession], md[MetaClient], md[MetaClientVersion] = s.id, c.name, c.version
	return md, nil
}

// create makes a sandbox the session owns. A sandbox that finishes being
// made after the session closed is killed at once.
func (s *session) create(ctx context.Context, req CreateRequest) (Sandbox, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return Sandbox{}, errdefs.Unavailable("the MCP session has ended")
	}
	sbx, err := s.be.Create(ctx, req)
	if err != nil {
		return Sandbox{}, err
	}
	s.mu.Lock()
	s.owned[sbx.ID] = true
	closed = s.closed
	s.mu.Unlock()
	if closed {
		s.kill(sbx.ID)
		return Sandbox{}, errdefs.Unavailable("the MCP session ended while the sandbox was made; it was killed")
	}
	return sbx, nil
}

// owns refuses a sandbox this session did not create exactly as the API
// refuses another tenant's: it is not found.
func (s *session) owns(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.owned[id] {
		return errdefs.NotFound("sandbox %s not found in this MCP session", id)
	}
	return nil
}

// watch arranges for close when the MCP session ends, once.
func (s *session) watch(ss *sdk.ServerSession, onClose func()) {
	if ss == nil {
		return
	}
	s.watchOnce.Do(func() {
		s.mu.Lock()
		s.sdkSess = ss
		s.mu.Unlock()
		go func() {
			_ = ss.Wait()
			s.close()
			if onClose != nil {
				onClose()
			}
		}()
	})
}

// end closes the MCP session itself (its requests and event stream end)
// and then the session's state.
func (s *session) end() {
	s.mu.Lock()
	ss := s.sdkSess
	s.mu.Unlock()
	if ss != nil {
		ss.Close()
	}
	s.close()
}

// close ends the session: no more creates, and every sandbox it made is
// killed (those already ended are skipped by the backend's answer).
func (s *session) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	ids := make([]string, 0, len(s.owned))
	for id := range s.owned {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	killed := 0
	for _, id := range ids {
		if s.kill(id) {
			killed++
		}
	}
	s.log.Info("mcp session ended", "sandboxes", len(ids), "killed", killed)
}

// kill kills one sandbox after the fact (no request context), reporting
// whether it was still running.
func (s *session) kill(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	err := s.be.Kill(ctx, id)
	switch {
	case err == nil:
		return true
	case errdefs.IsNotFound(err), errors.Is(err, errdefs.ErrFailedPrecondition):
		return false // already ended (its TTL, a kill) or gone
	}
	s.log.Warn("mcp session end: kill failed", "sandbox", id, "error_code", errdefs.Code(err))
	return false
}
