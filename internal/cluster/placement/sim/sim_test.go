package sim

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// deterministic is r without its wall-clock fields.
func deterministic(r Report) Report {
	r.DecisionP50us, r.DecisionP99us, r.WallS, r.RSSMiB = 0, 0, 0, 0
	return r
}

func TestSameSeedSameNumbers(t *testing.T) {
	cfg := ShortConfig()
	cfg.Loads = []float64{0.5, 0.95}
	cfg.FailuresPerNodeHour = 0.1 // some failures, so they are compared too
	a, err := Run(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Seed++
	c, err := Run(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if !reflect.DeepEqual(deterministic(a[i]), deterministic(b[i])) {
			t.Errorf("load %g: same seed, different numbers:\n%+v\n%+v", a[i].Load, a[i], b[i])
		}
		if reflect.DeepEqual(deterministic(a[i]), deterministic(c[i])) {
			t.Errorf("load %g: another seed gave the very same numbers", a[i].Load)
		}
		if a[i].NodeFailures == 0 || a[i].Creates == 0 || a[i].DecisionP99us <= 0 {
			t.Errorf("load %g: nothing to compare: %+v", a[i].Load, a[i])
		}
	}
}

// TestShortRunAtEveryLoad is the default run at 100 nodes x 256 slots:
// every create placed, the fleet filled to its target and balanced.
func TestShortRunAtEveryLoad(t *testing.T) {
	var seen []float64
	reports, err := Run(ShortConfig(), func(r Report) { seen = append(seen, r.Load) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []float64{0.5, 0.8, 0.9, 0.95}) {
		t.Fatalf("levels reported %v", seen)
	}
	for _, r := range reports {
		t.Logf("load %.2f: %d creates, success %.5f, attempts %.4f, fill %.3f (max/mean %.3f, p99/mean %.3f), warm %.3f, decision p50 %.2f us p99 %.2f us, failures %d, wall %.2f s",
			r.Load, r.Creates, r.SuccessRate, r.AttemptsPerCreate, r.MeanFill, r.MaxFillOverMean, r.P99FillOverMean,
			r.WarmHitRatio, r.DecisionP50us, r.DecisionP99us, r.NodeFailures, r.WallS)
		want := r.Load * float64(r.Nodes*r.Slots) * DefaultConfig().Churn
		if math.Abs(float64(r.Creates)-want) > 5*math.Sqrt(want) {
			t.Errorf("load %g: %d arrivals, want about %.0f", r.Load, r.Creates, want)
		}
		if r.SuccessRate < 0.999 || r.LiveNodesSwept != 0 {
			t.Errorf("load %g: success %.5f, %d live nodes swept", r.Load, r.SuccessRate, r.LiveNodesSwept)
		}
		// The fill is a node's fullest dimension, a little above the load.
		if r.MeanFill < r.Load-0.02 || r.MeanFill > r.Load+0.04 {
			t.Errorf("load %g: mean fill %.3f: the prefill or the arrival rate is off", r.Load, r.MeanFill)
		}
		if r.MaxFill > 1 || r.MaxFill < r.MeanFill {
			t.Errorf("load %g: fullest node at %.4f of its capacity, mean %.4f", r.Load, r.MaxFill, r.MeanFill)
		}
	}
}

// failureConfig makes failures frequent and lifetimes short, so that in a
// few seconds of wall time dozens of nodes fail while creates arrive at
// each node several times a second.
func failureConfig() Config {
	cfg := ShortConfig()
	cfg.Loads = []float64{0.6} // room for the nodes that are down
	cfg.LifetimeMedian, cfg.LifetimeSigma, cfg.TTL = 30*time.Second, 1, 10*time.Minute
	cfg.Churn = 20
	cfg.FailuresPerNodeHour = 1
	return cfg
}

// TestFailedNodesAreSweptInTime: every failed node still down at its sweep
// is swept within TTL + grace + one sweep interval of its failure, and no
// sooner than TTL + grace after its last heartbeat; no live node is swept;
// the circuit breaker keeps dispatches to dead nodes to about one each.
func TestFailedNodesAreSweptInTime(t *testing.T) {
	cfg := failureConfig()
	reports, err := Run(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	t.Logf("%d creates, %d failures, %d swept (detection mean %.1f s, max %.1f s), %d dead-node dispatches, %d sandboxes lost, success %.5f (failed %v)",
		r.Creates, r.NodeFailures, r.Detection.Count, r.Detection.Mean, r.Detection.Max, r.DeadNodeDispatches, r.SandboxesLost, r.SuccessRate, r.Failed)
	lc := cfg.Lease
	if r.NodeFailures < 10 || r.Detection.Count < 5 {
		t.Fatalf("%d failures, %d swept: too few to judge", r.NodeFailures, r.Detection.Count)
	}
	if bound := (lc.TTL + lc.Grace + lc.SweepInterval).Seconds(); r.Detection.Max > bound {
		t.Errorf("a dead node was swept %.1f s after it failed, want at most %.0f s", r.Detection.Max, bound)
	}
	beat := time.Duration(float64(lc.Heartbeat) * (1 + cfg.HeartbeatJitter))
	if floor := (lc.TTL + lc.Grace - beat).Seconds(); r.Detection.Mean < floor {
		t.Errorf("detection mean %.1f s: some node was swept before its lease and grace ran out (floor %.1f s)", r.Detection.Mean, floor)
	}
	if r.LiveNodesSwept != 0 {
		t.Errorf("%d live nodes swept", r.LiveNodesSwept)
	}
	// Each replica's breaker stops its dispatches to a dead node after
	// the first, until the lease is too short to choose it anyway.
	if r.DeadNodeDispatches == 0 || r.DeadNodeDispatches > int64(2*cfg.Replicas*r.NodeFailures) {
		t.Errorf("%d dispatches to dead nodes for %d failures and %d replicas: want some, and about one per failure and replica", r.DeadNodeDispatches, r.NodeFailures, cfg.Replicas)
	}
	if r.SandboxesLost == 0 || r.SuccessRate < 0.999 {
		t.Errorf("lost %d sandboxes, success %.5f", r.SandboxesLost, r.SuccessRate)
	}
}

// TestActuallyFullNodesRefuse overloads small nodes: a replica, seeing
// only heartbeats and its own creates, sends creates to nodes the other
// replicas filled; they refuse, the next node is tried, and no node ever
// holds more than it can.
func TestActuallyFullNodesRefuse(t *testing.T) {
	cfg := failureConfig()
	cfg.Slots = 16
	cfg.Loads = []float64{0.99}
	cfg.FailuresPerNodeHour = 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.RunLevel(0.99)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("success %.4f, attempts/create %.4f, refusals/create %.4f, failed %v", r.SuccessRate, r.AttemptsPerCreate, r.RefusalsPerCreate, r.Failed)
	if r.RefusalsPerCreate == 0 || r.AttemptsPerCreate <= 1 {
		t.Fatalf("no refusals at 99%% of 16 slots: the node's true state is not consulted")
	}
	if r.SuccessRate > 0.9999 || r.Failed[errdefs.ErrResourceExhausted.Error()] == 0 {
		t.Fatalf("every create placed at 99%% load (failed %v)", r.Failed)
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if len(n.ends) > cfg.Slots || float64(n.mem) > s.m.memCap || float64(n.cpus) > s.m.vcpuCap {
			t.Fatalf("node %d holds %d sandboxes, %d MiB, %d vCPUs: past its capacity", i, len(n.ends), n.mem, n.cpus)
		}
	}
}

func TestLifetimeLaw(t *testing.T) {
	cfg := DefaultConfig()
	lt := newLifetime(&cfg)
	rng := rand.New(rand.NewPCG(8, 9))
	const n = 400000
	sum, resid := 0.0, 0.0
	for range n {
		sum += float64(lt.draw(rng))
		resid += float64(lt.residual(rng))
	}
	if got := sum / n; math.Abs(got/lt.mean-1) > 0.03 {
		t.Errorf("mean of draws %v, the law's mean %v", time.Duration(got), time.Duration(lt.mean))
	}
	// In the steady state the remaining lifetime averages E[L^2]/(2 E[L]),
	// L the capped lifetime.
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	lnCap, s2 := math.Log(lt.cap), lt.sigma*lt.sigma
	second := math.Exp(2*lt.mu+2*s2)*phi((lnCap-lt.mu-2*s2)/lt.sigma) + lt.cap*lt.cap*(1-phi((lnCap-lt.mu)/lt.sigma))
	want := second / (2 * lt.mean)
	if got := resid / n; math.Abs(got/want-1) > 0.03 {
		t.Errorf("mean residual %v, want %v", time.Duration(got), time.Duration(want))
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"no nodes":       func(c *Config) { c.Nodes = 0 },
		"load 1":         func(c *Config) { c.Loads = []float64{1} },
		"load 0":         func(c *Config) { c.Loads = []float64{0} },
		"257 templates":  func(c *Config) { c.Templates = 257 },
		"zipf 1":         func(c *Config) { c.ZipfS = 1 },
		"crash share":    func(c *Config) { c.CrashShare = 2 },
		"bad lease":      func(c *Config) { c.Lease.SweepInterval = time.Minute },
		"freeze min>max": func(c *Config) { c.FreezeMin = time.Hour },
	} {
		c := ShortConfig()
		mutate(&c)
		if _, err := New(c); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: %v, want invalid_argument", name, err)
		}
	}
}

// BenchmarkLevel is one level at 1,000 nodes with few slots: the cost per
// create at full fleet width.
func BenchmarkLevel(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Slots = 1024
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := s.RunLevel(0.95)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(r.WallS)*1e9/float64(r.Creates), "ns/create")
	}
}
