package api

import (
	"context"
	"net/http"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Caller is who an authenticated request came from.
type Caller struct {
	Tenant string // from the key, never from the request
	KeyID  string // the key's id (not the key)
}

type callerKey struct{}

// CallerFrom returns the caller of a request the API authenticated and
// passed to Config.MCP; ok is false for any other context.
func CallerFrom(ctx context.Context) (c Caller, ok bool) {
	c, ok = ctx.Value(callerKey{}).(Caller)
	return c, ok && c.Tenant != ""
}

// mcp hands /mcp to Config.MCP with the caller in the request's context.
// The MCP handler writes its own answers (JSON-RPC, event streams, and
// plain-text protocol errors), so nothing is returned once it has run.
func (s *server) mcp(w *respWriter, r *http.Request, c *call) error {
	if s.mcpH == nil {
		return errdefs.NotFound("this daemon does not serve MCP")
	}
	ctx := context.WithValue(r.Context(), callerKey{}, Caller{Tenant: c.tenant, KeyID: c.keyID})
	s.mcpH.ServeHTTP(w, r.WithContext(ctx))
	return nil
}
