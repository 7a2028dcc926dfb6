package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestExposition(t *testing.T) {
	m := New()
	m.CreateObserved(40 * time.Millisecond)
	m.CreateObserved(2 * time.Second)
	m.Forked(2)
	m.Killed(ReasonKilled)
	m.Killed(ReasonExpired)
	m.ExecObserved(time.Second)
	m.Error(errdefs.NotFound("x"))
	m.HTTPRequest("GET /v1/sandboxes", 200)

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	text := string(body)
	for _, want := range []string{
		"airlock_sandboxes_running 2",
		"airlock_sandbox_creates_total 2",
		"airlock_sandbox_forks_total 2",
		`airlock_sandbox_kills_total{reason="killed"} 1`,
		`airlock_sandbox_kills_total{reason="expired"} 1`,
		"airlock_ttl_expiries_total 1",
		`airlock_sandbox_create_seconds_bucket{le="0.05"} 1`,
		`airlock_sandbox_create_seconds_bucket{le="30"} 2`,
		"airlock_exec_seconds_count 1",
		`airlock_errors_total{class="not_found"} 1`,
		`airlock_http_requests_total{code="200",route="GET /v1/sandboxes"} 1`,
		"go_goroutines",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}

func TestNilSafe(t *testing.T) {
	var m *Metrics
	m.CreateObserved(time.Second)
	m.Forked(1)
	m.Killed("x")
	m.Failed(errdefs.ErrInternal)
	m.ExecObserved(time.Second)
	m.Error(errdefs.ErrInternal)
	m.HTTPRequest("x", 500)
	m.SetRunning(3)
}
