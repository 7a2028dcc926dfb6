package api_test

import (
	"net/http"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
)

// TestMCPRoute: /mcp is authenticated like every other route, reaches
// Config.MCP with the key's tenant in the context, and is a JSON 404 on a
// daemon that serves no MCP.
func TestMCPRoute(t *testing.T) {
	h := newHarness(t, api.Config{})
	wantErr(t, h.do("POST", "/mcp", h.keyA, "{}"), http.StatusNotFound, "not_found")

	var seen []api.Caller
	mh := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := api.CallerFrom(r.Context())
		if !ok {
			t.Error("MCP handler reached without a caller")
		}
		seen = append(seen, c)
		w.WriteHeader(http.StatusAccepted)
	})
	h = newHarness(t, api.Config{MCP: mh})
	wantErr(t, h.do("POST", "/mcp", "", "{}"), http.StatusUnauthorized, "permission_denied")
	wantErr(t, h.do("GET", "/mcp", "alk_wrong", nil), http.StatusUnauthorized, "permission_denied")
	for _, m := range []string{"POST", "GET", "DELETE"} {
		if r := h.do(m, "/mcp", h.keyB, nil); r.status != http.StatusAccepted {
			t.Errorf("%s /mcp: %d %s", m, r.status, r.body)
		}
	}
	if len(seen) != 3 || seen[0].Tenant != "tenant-b" || seen[0].KeyID == "" {
		t.Errorf("callers seen: %+v, want tenant-b with a key id, 3 times", seen)
	}
	if len(seen) > 0 && seen[0].KeyID == h.keyB {
		t.Error("the caller carries the key itself, not its id")
	}
}
