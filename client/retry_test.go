package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// refusing answers status (with airlock's error body) the first refusals
// times, then 200 {"status":"ok"}; it counts the requests.
func refusing(t *testing.T, status, refusals int, retryAfter string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(n.Add(1)) <= refusals {
			if retryAfter != "" {
				w.Header().Set("Retry-After", retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			code := map[int]string{429: "resource_exhausted", 503: "unavailable"}[status]
			_, _ = w.Write([]byte(`{"error": {"code": "` + code + `", "message": "busy"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"status": "ok"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestRetriesRefusedCalls(t *testing.T) {
	ctx := context.Background()
	srv, n := refusing(t, 429, 2, "")
	c, err := client.New(srv.URL, "k")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Health(ctx); err != nil || n.Load() != 3 {
		t.Fatalf("health after two 429s: %v after %d requests, want success after 3", err, n.Load())
	}

	// Off: the first refusal is the answer.
	srv, n = refusing(t, 429, 1, "")
	c, _ = client.New(srv.URL, "k", client.WithRetries(0))
	if err := c.Health(ctx); !errors.Is(err, client.ErrResourceExhausted) || n.Load() != 1 {
		t.Fatalf("no retries: %v after %d requests", err, n.Load())
	}

	// More refusals than retries: the last refusal is the answer.
	srv, n = refusing(t, 429, 10, "")
	c, _ = client.New(srv.URL, "k", client.WithRetries(2))
	if err := c.Health(ctx); !errors.Is(err, client.ErrResourceExhausted) || n.Load() != 3 {
		t.Fatalf("two retries: %v after %d requests", err, n.Load())
	}
}

func TestRetriesOnlyWhatIsSafeToRepeat(t *testing.T) {
	ctx := context.Background()
	// A POST that got 503 may have run half-way: never sent again.
	srv, n := refusing(t, 503, 1, "")
	c, _ := client.New(srv.URL, "k")
	if _, err := c.Sandbox("sbx-0123456789abcdef").Exec(ctx, "true"); !errors.Is(err, client.ErrUnavailable) || n.Load() != 1 {
		t.Fatalf("exec after 503: %v after %d requests, want unavailable after 1", err, n.Load())
	}
	// A GET that got 503 is.
	srv, n = refusing(t, 503, 1, "")
	c, _ = client.New(srv.URL, "k")
	if err := c.Health(ctx); err != nil || n.Load() != 2 {
		t.Fatalf("health after 503: %v after %d requests", err, n.Load())
	}
	// A streamed upload cannot be replayed: never sent again.
	srv, n = refusing(t, 429, 1, "")
	c, _ = client.New(srv.URL, "k")
	if _, err := c.Sandbox("sbx-0123456789abcdef").Files().Write(ctx, "/job/x", strings.NewReader("x")); !errors.Is(err, client.ErrResourceExhausted) || n.Load() != 1 {
		t.Fatalf("upload after 429: %v after %d requests", err, n.Load())
	}
}

func TestRetriesFollowRetryAfterWithinTheContext(t *testing.T) {
	srv, n := refusing(t, 429, 1, "30")
	c, _ := client.New(srv.URL, "k")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Health(ctx); !errors.Is(err, context.DeadlineExceeded) || n.Load() != 1 {
		t.Fatalf("Retry-After 30 s in a 300 ms context: %v after %d requests", err, n.Load())
	}
}
