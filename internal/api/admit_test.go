package api_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/api"
)

// holdStreams starts n exec/stream requests for key in sandbox id, each
// held until its request ends, and returns once all n run (so hold their
// admission slots); cancel ends them all.
func (h *harness) holdStreams(key, id string, n int) (cancel func()) {
	h.t.Helper()
	dir := fmt.Sprintf("/held-streams-%d", heldCalls.Add(1))
	if r := h.do("POST", "/v1/sandboxes/"+id+"/files/mkdir?path="+dir, key, nil); r.status != 204 {
		h.t.Fatalf("mkdir %s: %d %s", dir, r.status, r.body)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Paths are relative: a local machine's commands run in its root.
			body := fmt.Sprintf(`{"cmd":"touch .%s/%d && sleep 600"}`, dir, i)
			req, _ := http.NewRequestWithContext(ctx, "POST", h.env.TCPURL+"/v1/sandboxes/"+id+"/exec/stream", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			if res, err := http.DefaultClient.Do(req); err == nil {
				// The body never ends: read until the request is cancelled.
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}()
	}
	h.untilFiles(key, id, dir, n)
	return func() { stop(); wg.Wait() }
}

var heldCalls atomic.Int64

// untilRefused repeats a request until it is refused with 429, which it
// must be once the held ones are all admitted; it returns that answer.
func (h *harness) untilRefused(method, path, key string, body string) resp {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := h.do(method, path, key, body)
		if r.status == http.StatusTooManyRequests {
			return r
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s %s was never refused (last: %d %s)", method, path, r.status, r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// untilServed repeats a request until it is answered 200, which it must
// be once held requests were released.
func (h *harness) untilServed(method, path, key string, body string) {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r := h.do(method, path, key, body)
		if r.status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s %s was never served again (last: %d %s)", method, path, r.status, r.body)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A tenant holding its most streams at once gets 429 for one more (with
// Retry-After and its connection closed), while its other requests and
// every other tenant's are served; the slots come back when they end.
func TestAdmissionPerTenant(t *testing.T) {
	h := newHarness(t, api.Config{Admission: api.Admission{Streams: 3}})
	idA, idB := h.create(h.keyA, nil), h.create(h.keyB, nil)
	release := h.holdStreams(h.keyA, idA, 3)
	r := h.untilRefused("POST", "/v1/sandboxes/"+idA+"/exec/stream", h.keyA, `{"cmd":"echo x"}`)
	wantErr(t, r, 429, "resource_exhausted")
	if r.header.Get("Retry-After") == "" || !r.closed {
		t.Errorf("refusal headers: %v", r.header)
	}
	if r := h.do("GET", "/v1/sandboxes/"+idA, h.keyA, nil); r.status != 200 {
		t.Errorf("the same tenant's plain request: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/sandboxes/"+idB+"/exec/stream", h.keyB, `{"cmd":"echo x"}`); r.status != 200 {
		t.Errorf("another tenant's stream: %d %s", r.status, r.body)
	}
	release()
	h.untilServed("POST", "/v1/sandboxes/"+idA+"/exec/stream", h.keyA, `{"cmd":"echo x"}`)
}

// Past its first ReserveFloor requests a tenant cannot take the global
// reserve: a flood by one tenant leaves room for a quiet one.
func TestAdmissionGlobalReserve(t *testing.T) {
	h := newHarness(t, api.Config{Admission: api.Admission{GlobalRequests: 6, Reserve: 2, ReserveFloor: 2}})
	idA, idB := h.create(h.keyA, nil), h.create(h.keyB, nil)
	release := h.holdStreams(h.keyA, idA, 4)
	defer release()
	r := h.untilRefused("GET", "/v1/sandboxes/"+idA, h.keyA, "")
	wantErr(t, r, 429, "resource_exhausted")
	if !strings.Contains(string(r.body), "daemon") {
		t.Errorf("refusal should say the daemon is at its limit: %s", r.body)
	}
	for i := 0; i < 3; i++ {
		if r := h.do("GET", "/v1/sandboxes/"+idB, h.keyB, nil); r.status != 200 {
			t.Fatalf("a quiet tenant's request %d: %d %s", i, r.status, r.body)
		}
	}
}

// The attack that locked every tenant out: one tenant opens far more
// long-polls than it may hold. The extra ones are refused at once and
// their connections closed; the other tenant is served throughout.
func TestLongPollFloodLocksNobodyOut(t *testing.T) {
	h := newHarness(t, api.Config{})
	sb := decodeAs[wire.Sandbox](t, h.do("POST", "/v1/sandboxes", h.keyA, map[string]any{"template": "base"}), http.StatusCreated)
	base := "/v1/sandboxes/" + sb.ID + "/processes"
	decodeAs[wire.Process](t, h.do("POST", base, h.keyA, map[string]any{"cmd": "sleep 120"}), http.StatusCreated)
	const flood = 600
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	codes := make(chan int, flood)
	for i := 0; i < flood; i++ {
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", h.env.TCPURL+base+"/p-1/output?wait_seconds=60", nil)
			req.Header.Set("Authorization", "Bearer "+h.keyA)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				codes <- 0
				return
			}
			res.Body.Close()
			codes <- res.StatusCode
		}()
	}
	refused := 0
	for refused < flood-api.DefaultTenantLongPolls {
		select {
		case c := <-codes:
			if c != http.StatusTooManyRequests {
				t.Fatalf("a long-poll over the limit answered %d", c)
			}
			refused++
		case <-time.After(2 * time.Minute):
			t.Fatalf("only %d of the %d long-polls over the limit were refused", refused, flood-api.DefaultTenantLongPolls)
		}
	}
	sbB := decodeAs[wire.Sandbox](t, h.do("POST", "/v1/sandboxes", h.keyB, map[string]any{"template": "base"}), http.StatusCreated)
	if r := h.do("GET", fmt.Sprintf("/v1/sandboxes/%s", sbB.ID), h.keyB, nil); r.status != 200 {
		t.Fatalf("the other tenant during the flood: %d %s", r.status, r.body)
	}
	stop()
}
