package api_test

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/airlock-dev/airlock/internal/api"
	"github.com/airlock-dev/airlock/internal/api/apitest"
)

// FuzzRequestBodies sends arbitrary bodies to every route that reads one.
// The server never panics and never answers 500 for a body it could not
// use: it is a 4xx with the error shape, or a success.
func FuzzRequestBodies(f *testing.F) {
	env := apitest.StartLocal(f, api.Config{})
	key := env.Key(f, "acme")
	created := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/sandboxes", bytes.NewReader([]byte(`{"template":"base"}`)))
	req.Header.Set("Authorization", "Bearer "+key)
	env.Handler.ServeHTTP(created, req)
	var sb struct{ ID string }
	json.Unmarshal(created.Body.Bytes(), &sb)
	routes := []struct{ method, path string }{
		{"POST", "/v1/sandboxes"},
		// Not exec: local machines run commands on the host, and a fuzzer
		// must not run the commands it makes up. Exec bodies are decoded by
		// the same strict decoder as these.
		{"POST", "/v1/sandboxes/" + sb.ID + "/fork"},
		{"PUT", "/v1/sandboxes/" + sb.ID + "/egress"},
		{"POST", "/v1/sandboxes/" + sb.ID + "/files/mkdir"},
	}
	f.Add(uint8(0), []byte(`{"template":"base","ttl_seconds":30,"metadata":{"matter":"m"}}`))
	f.Add(uint8(1), []byte(`{"count":1e9}`))
	f.Add(uint8(2), []byte(`{"default":"deny","allow":[{"name":"x","cidr":"10.0.0.0/8","ports":[70000]}]}`))
	f.Add(uint8(3), []byte(`{"path":"/../../etc","parents":true}`))
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		w := httptest.NewRecorder()
		req := httptest.NewRequest(r.method, r.path, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		env.Handler.ServeHTTP(w, req)
		if w.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, w.Code, w.Body.String())
		}
		if w.Code >= 400 {
			var e struct {
				Error struct{ Code, Message string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
				t.Fatalf("%s %s: %d without the error shape: %s", r.method, r.path, w.Code, w.Body.String())
			}
		}
	})
}
