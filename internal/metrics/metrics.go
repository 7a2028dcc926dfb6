// Package metrics holds airlock's Prometheus collectors on a private registry
// (never the global default one, so tests and embedders can make as many as
// they like) and the small methods the sandbox manager and the API call to
// feed them.
//
// Every method is safe on a nil *Metrics and then does nothing, so code under
// test can run without metrics. Labels are closed sets (kill reasons, error
// classes, route patterns, status codes): nothing a caller sends ever becomes
// a label value, which keeps cardinality bounded and content out of metrics.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Kill reasons for Killed.
const (
	ReasonKilled  = "killed"  // a client asked
	ReasonExpired = "expired" // the TTL reaper
)

// Metrics is one set of collectors registered on its own registry. Its
// fields but usageMu and usageWatched are immutable after New; the
// collectors themselves are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	running       prometheus.Gauge
	creates       prometheus.Counter
	forks         prometheus.Counter
	kills         *prometheus.CounterVec // reason
	createSeconds prometheus.Histogram
	execSeconds   prometheus.Histogram
	ttlExpiries   prometheus.Counter
	errors        *prometheus.CounterVec // class
	httpRequests  *prometheus.CounterVec // route, code

	usageMu      sync.Mutex
	usageWatched bool // guarded by usageMu: WatchSandboxUsage has registered its collector
}

// createBuckets run from 10 ms (a warm restore on KVM) to 30 s (a cold
// restore under TCG emulation on a loaded host).
var createBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30}

// execBuckets cover a `true` round trip to a multi-minute OCR job.
var execBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// New makes the collectors and registers them, with the Go runtime and
// process collectors, on a fresh registry.
func New() *Metrics {
	const ns = "airlock"
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		running: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Name: "sandboxes_running",
			Help: "Sandboxes currently running on this host."}),
		creates: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "sandbox_creates_total",
			Help: "Sandboxes created (restored from a template), forks excluded."}),
		forks: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "sandbox_forks_total",
			Help: "Sandboxes created by forking a running sandbox."}),
		kills: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "sandbox_kills_total",
			Help: "Sandboxes ended, by reason (killed by a client, expired by the TTL reaper)."}, []string{"reason"}),
		createSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "sandbox_create_seconds",
			Help: "Time to create a sandbox, from request to ready for its first exec.", Buckets: createBuckets}),
		execSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Name: "exec_seconds",
			Help: "Duration of processes run in sandboxes.", Buckets: execBuckets}),
		ttlExpiries: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Name: "ttl_expiries_total",
			Help: "Sandboxes killed by the TTL reaper."}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "errors_total",
			Help: "Errors by class (errdefs code)."}, []string{"class"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: "http_requests_total",
			Help: "API requests by route pattern and status code."}, []string{"route", "code"}),
	}
	m.reg.MustRegister(m.running, m.creates, m.forks, m.kills, m.createSeconds, m.execSeconds,
		m.ttlExpiries, m.errors, m.httpRequests,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Make the closed label sets visible at zero, so dashboards and alerts
	// see a series before the first event.
	for _, r := range []string{ReasonKilled, ReasonExpired} {
		m.kills.WithLabelValues(r)
	}
	return m
}

// Registry is the private registry, for embedding in another exposition.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// SetRunning sets the number of running sandboxes (the manager's count is
// the truth; recovery after a restart sets it once).
func (m *Metrics) SetRunning(n int) {
	if m != nil {
		m.running.Set(float64(n))
	}
}

// CreateObserved records one successful create that took d; it also counts
// the sandbox as running.
func (m *Metrics) CreateObserved(d time.Duration) {
	if m != nil {
		m.creates.Inc()
		m.createSeconds.Observe(d.Seconds())
		m.running.Inc()
	}
}

// Forked records n children forked from a sandbox; they count as running.
func (m *Metrics) Forked(n int) {
	if m != nil && n > 0 {
		m.forks.Add(float64(n))
		m.running.Add(float64(n))
	}
}

// Killed records a running sandbox ending for reason (ReasonKilled or
// ReasonExpired; anything else is counted as "killed"). Expiries also count
// in ttl_expiries_total. The sandbox stops counting as running.
func (m *Metrics) Killed(reason string) {
	if m == nil {
		return
	}
	if reason != ReasonExpired {
		reason = ReasonKilled
	} else {
		m.ttlExpiries.Inc()
	}
	m.kills.WithLabelValues(reason).Inc()
	m.running.Dec()
}

// Failed records a sandbox that was counted as running and ended by an
// error (crash, failed restore after start): it stops counting as running
// and its error class is counted.
func (m *Metrics) Failed(err error) {
	if m != nil {
		m.running.Dec()
		m.Error(err)
	}
}

// ExecObserved records one process that ran for d in a sandbox.
func (m *Metrics) ExecObserved(d time.Duration) {
	if m != nil {
		m.execSeconds.Observe(d.Seconds())
	}
}

// Error counts err under its errdefs class. The API counts every error it
// returns to a client; other callers count only errors no client will see
// (reaper, recovery), so nothing is counted twice.
func (m *Metrics) Error(err error) {
	if m != nil && err != nil {
		m.errors.WithLabelValues(errdefs.Code(err)).Inc()
	}
}

// HTTPRequest counts one API request answered with status code on route
// (the registered pattern, never the raw path).
func (m *Metrics) HTTPRequest(route string, code int) {
	if m != nil {
		m.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	}
}
