package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Config is one simulation. DefaultConfig is the full run; ShortConfig a
// small one for the test suite.
type Config struct {
	Seed  uint64
	Nodes int
	Slots int // per node
	// Replicas is the API tier's size: each replica places with its own
	// in-flight creates and circuit breaker, so only another replica's
	// creates can make a node fuller than a placer believes.
	Replicas int
	// Loads are the target loads to run, each a fraction of capacity
	// (0 < load < 1).
	Loads []float64
	// Templates (at most 256: a sandbox's template is packed in 8 bits)
	// and the exponent of their Zipf popularity (> 1).
	Templates int
	ZipfS     float64
	// Lifetimes are lognormal with this median and sigma, capped by TTL.
	LifetimeMedian time.Duration
	LifetimeSigma  float64
	TTL            time.Duration
	// Churn is how many mean lifetimes of arrivals each level runs after
	// its prefill.
	Churn float64
	// WarmPerTemplate clones per template wait on each node; a clone taken
	// is ready again WarmRefill later.
	WarmPerTemplate int
	WarmRefill      time.Duration
	// FailuresPerNodeHour is the rate at which a node fails; CrashShare of
	// the failures are crashes, the rest freezes. A crashed node is back
	// after CrashDownMin to CrashDownMax, a frozen one after FreezeMin to
	// FreezeMax (uniform).
	FailuresPerNodeHour        float64
	CrashShare                 float64
	CrashDownMin, CrashDownMax time.Duration
	FreezeMin, FreezeMax       time.Duration
	// HeartbeatJitter: each heartbeat interval is uniform within this
	// fraction either side of Lease.Heartbeat.
	HeartbeatJitter float64
	// SampleEvery is how often node fill is sampled.
	SampleEvery time.Duration
	Lease       lease.Config
	Placement   placement.Config
}

// DefaultConfig is the full run: 1,000 nodes x 16,384 slots at loads 0.5,
// 0.8, 0.9 and 0.95, lifetimes of median 20 min (mean about an hour, so a
// level sees about ten node failures at 1% per node-hour).
func DefaultConfig() Config {
	return Config{
		Seed: 1, Nodes: 1000, Slots: 16384, Replicas: 3, Loads: []float64{0.5, 0.8, 0.9, 0.95},
		Templates: 16, ZipfS: 1.1,
		LifetimeMedian: 20 * time.Minute, LifetimeSigma: 1.5, TTL: 24 * time.Hour,
		Churn: 1, WarmPerTemplate: 2, WarmRefill: time.Second,
		FailuresPerNodeHour: 0.01, CrashShare: 0.5,
		CrashDownMin: 2 * time.Minute, CrashDownMax: 15 * time.Minute,
		FreezeMin: 10 * time.Second, FreezeMax: 5 * time.Minute,
		HeartbeatJitter: 0.1, SampleEvery: time.Minute,
		Lease: lease.Defaults(), Placement: placement.DefaultConfig(),
	}
}

// ShortConfig is DefaultConfig at 100 nodes x 256 slots: a second or so.
func ShortConfig() Config {
	c := DefaultConfig()
	c.Nodes, c.Slots = 100, 256
	return c
}

// Validate reports a Config the model cannot run.
func (c *Config) Validate() error {
	var errs []error
	if c.Nodes < 1 || c.Slots < 1 || c.Replicas < 1 {
		errs = append(errs, fmt.Errorf("nodes %d, slots %d and replicas %d must be at least 1", c.Nodes, c.Slots, c.Replicas))
	}
	for _, l := range c.Loads {
		if !(l > 0 && l < 1) {
			errs = append(errs, fmt.Errorf("load %g must be between 0 and 1", l))
		}
	}
	if c.Templates < 1 || c.Templates > 256 || !(c.ZipfS > 1) {
		errs = append(errs, fmt.Errorf("templates %d must be 1 to 256 and the Zipf exponent %g above 1", c.Templates, c.ZipfS))
	}
	if c.LifetimeMedian <= 0 || c.LifetimeSigma <= 0 || c.TTL <= 0 || c.Churn <= 0 || c.SampleEvery <= 0 {
		errs = append(errs, errors.New("lifetime median and sigma, TTL, churn and sample interval must be positive"))
	}
	if c.WarmPerTemplate < 0 || c.FailuresPerNodeHour < 0 || c.CrashShare < 0 || c.CrashShare > 1 ||
		c.CrashDownMin > c.CrashDownMax || c.FreezeMin > c.FreezeMax || c.HeartbeatJitter < 0 || c.HeartbeatJitter >= 1 {
		errs = append(errs, errors.New("warm clones, failure rate, crash share (0-1), down times (min <= max) and jitter (0-1) out of range"))
	}
	if err := c.Lease.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return errdefs.InvalidArgument("simulation config: %v", err)
	}
	return nil
}

// template is one template of the mix.
type template struct {
	name   string
	build  string
	memMiB int64
	vcpus  int
	caps   []string
	p      float64 // popularity, from the Zipf law
}

// mix returns the templates: memory cycles 512, 1024, 2048, 256 MiB and
// vCPUs 1, 2 down the popularity order; every other template needs a
// network. Their p sum to 1.
func (c *Config) mix() []template {
	ts := make([]template, c.Templates)
	sum := 0.0
	for k := range ts {
		ts[k] = template{
			name: fmt.Sprintf("tmpl-%02d", k), build: fmt.Sprintf("b%02d", k),
			memMiB: []int64{512, 1024, 2048, 256}[k%4], vcpus: 1 + k%2,
			p: math.Pow(float64(1+k), -c.ZipfS),
		}
		if k%2 == 1 {
			ts[k].caps = []string{"net"}
		}
		sum += ts[k].p
	}
	for k := range ts {
		ts[k].p /= sum
	}
	return ts
}

// capacity is a node's capacity for the mix: S slots, and memory and
// vCPUs that S sandboxes of the mix's mean size fill exactly.
func (c *Config) capacity(ts []template) placement.Resources {
	mem, vcpus := 0.0, 0.0
	for _, t := range ts {
		mem += t.p * float64(t.memMiB)
		vcpus += t.p * float64(t.vcpus)
	}
	s := float64(c.Slots)
	return placement.Resources{
		Slots:  c.Slots,
		MemMiB: int64(math.Ceil(s * mem / c.Placement.MemOvercommit)),
		VCPUs:  int(math.Ceil(s * vcpus / c.Placement.VCPUOvercommit)),
	}
}

// lifetime is the capped lognormal law of sandbox lifetimes, in ns.
type lifetime struct {
	mu, sigma float64 // of ln(lifetime in ns)
	cap       float64 // TTL in ns
	mean      float64 // E[min(X, cap)]
	atom      float64 // probability that a length-biased draw is the cap
}

func newLifetime(c *Config) lifetime {
	l := lifetime{mu: math.Log(float64(c.LifetimeMedian)), sigma: c.LifetimeSigma, cap: float64(c.TTL)}
	lnCap := math.Log(l.cap)
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	below := math.Exp(l.mu+l.sigma*l.sigma/2) * phi((lnCap-l.mu-l.sigma*l.sigma)/l.sigma)
	capped := l.cap * (1 - phi((lnCap-l.mu)/l.sigma))
	l.mean = below + capped
	l.atom = capped / l.mean
	return l
}
