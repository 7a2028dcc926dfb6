package api

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Admission bounds what requests hold at once, per tenant and in all, so
// that no tenant can lock the others out: held-open long-polls used to
// take every descriptor the daemon had (accept4: too many open files) and
// every other tenant's requests failed until they ended.
//
// Every authenticated request counts against its tenant's Requests and
// the daemon's GlobalRequests; a long-poll (a process wait, an output
// read with wait_seconds) also against LongPolls, and a request that
// streams or runs a command (exec, exec/stream, file and archive
// transfers) against Streams. A tenant past its first ReserveFloor
// requests cannot take the last Reserve global slots: they stay for
// tenants that have next to nothing running. A refused request is 429
// resource_exhausted with Retry-After, and its connection is closed so
// that a refused client holds no descriptor either.
type Admission struct {
	Requests       int // per tenant; default DefaultTenantRequests
	LongPolls      int // per tenant; default DefaultTenantLongPolls
	Streams        int // per tenant; default DefaultTenantStreams
	GlobalRequests int // all tenants; default DefaultGlobalRequests
	Reserve        int // global slots kept for quiet tenants; default GlobalRequests/16
	ReserveFloor   int // requests a tenant may always have, reserve or not; default 16
}

// Defaults for Admission.
const (
	DefaultTenantRequests  = 512
	DefaultTenantLongPolls = 128
	DefaultTenantStreams   = 128
	DefaultGlobalRequests  = 4096
	defaultReserveFloor    = 16
)

func (a Admission) withDefaults() Admission {
	if a.Requests <= 0 {
		a.Requests = DefaultTenantRequests
	}
	if a.LongPolls <= 0 {
		a.LongPolls = DefaultTenantLongPolls
	}
	if a.Streams <= 0 {
		a.Streams = DefaultTenantStreams
	}
	if a.GlobalRequests <= 0 {
		a.GlobalRequests = DefaultGlobalRequests
	}
	if a.Reserve <= 0 {
		a.Reserve = a.GlobalRequests / 16
	}
	a.Reserve = min(a.Reserve, a.GlobalRequests-1)
	if a.ReserveFloor <= 0 {
		a.ReserveFloor = defaultReserveFloor
	}
	return a
}

// admitClass is what kind of hold a request is, beyond being a request.
type admitClass int

const (
	admitPlain    admitClass = iota
	admitLongPoll            // waits for something to happen: a process's end, new output
	admitStream              // moves bytes or runs a command for as long as that takes
)

// streamRoutes are the routes that hold their request while bytes move or
// a command runs. An MCP POST carries tool calls, which run commands and
// move files.
var streamRoutes = map[string]bool{
	"POST /mcp":                           true,
	"POST /v1/sandboxes/{id}/exec":        true,
	"POST /v1/sandboxes/{id}/exec/stream": true,
	"PUT /v1/sandboxes/{id}/files":        true,
	"GET /v1/sandboxes/{id}/files":        true,
	"PUT /v1/sandboxes/{id}/archive":      true,
	"GET /v1/sandboxes/{id}/archive":      true,
}

// classify says how a request to route pattern holds the daemon.
func classify(pattern string, r *http.Request) admitClass {
	switch {
	case streamRoutes[pattern]:
		return admitStream
	case pattern == "POST /v1/sandboxes/{id}/processes/{pid}/wait":
		// Waits 30 s unless told 0.
		if v := r.URL.Query().Get("timeout_seconds"); v == "" || !isZero(v) {
			return admitLongPoll
		}
	case pattern == "GET /mcp":
		// MCP's server-to-client event stream stays open for the session.
		return admitLongPoll
	case pattern == "GET /v1/sandboxes/{id}/processes/{pid}/output":
		if v := r.URL.Query().Get("wait_seconds"); v != "" && !isZero(v) {
			return admitLongPoll
		}
	}
	return admitPlain
}

func isZero(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	return err == nil && f == 0
}

// admitter counts what each tenant holds. It is safe for concurrent use.
type admitter struct {
	lim Admission // immutable

	mu      sync.Mutex
	total   int                    // guarded by mu; requests held, all tenants
	tenants map[string]*tenantHold // guarded by mu; entries with nothing held are removed
}

// tenantHold is one tenant's share; guarded by admitter.mu.
type tenantHold struct {
	requests, longPolls, streams int
}

func newAdmitter(lim Admission) *admitter {
	return &admitter{lim: lim.withDefaults(), tenants: map[string]*tenantHold{}}
}

// admit counts one request of tenant, or refuses it. The returned func
// gives it back; call it exactly once.
func (a *admitter) admit(tenant string, class admitClass) (release func(), err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h := a.tenants[tenant]
	if h == nil {
		h = &tenantHold{}
	}
	switch {
	case h.requests >= a.lim.Requests:
		return nil, errdefs.ResourceExhausted("this tenant already has %d requests in progress, the most it may", a.lim.Requests)
	case class == admitLongPoll && h.longPolls >= a.lim.LongPolls:
		return nil, errdefs.ResourceExhausted("this tenant already has %d long-polls waiting (process waits, output reads with wait_seconds), the most it may", a.lim.LongPolls)
	case class == admitStream && h.streams >= a.lim.Streams:
		return nil, errdefs.ResourceExhausted("this tenant already has %d execs and transfers in progress, the most it may", a.lim.Streams)
	case a.total >= a.lim.GlobalRequests,
		a.total >= a.lim.GlobalRequests-a.lim.Reserve && h.requests >= a.lim.ReserveFloor:
		return nil, errdefs.ResourceExhausted("the daemon is at its limit of requests in progress; retry shortly")
	}
	a.tenants[tenant] = h
	a.total++
	h.add(class, 1)
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.total--
			h.add(class, -1)
			if h.requests == 0 {
				delete(a.tenants, tenant)
			}
		})
	}, nil
}

func (h *tenantHold) add(class admitClass, n int) {
	h.requests += n
	switch class {
	case admitLongPoll:
		h.longPolls += n
	case admitStream:
		h.streams += n
	}
}

// refusedRetryAfter is the Retry-After, in seconds, of a refused request.
const refusedRetryAfter = "1"
