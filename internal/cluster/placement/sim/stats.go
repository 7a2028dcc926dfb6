package sim

import (
	"math"
	"math/bits"
	"time"
)

// Report is one load level's outcome. Decision times, wall time and RSS
// are wall-clock measurements; everything else follows from the seed.
type Report struct {
	Load  float64 `json:"load"`
	Nodes int     `json:"nodes"`
	Slots int     `json:"slots"`
	// Creates is the arrivals during the churn (the prefill not counted).
	Creates int64 `json:"creates"`
	// SuccessRate: creates placed / creates.
	SuccessRate float64 `json:"success_rate"`
	// Failed counts the creates not placed, by error code.
	Failed map[string]int64 `json:"failed,omitempty"`
	// AttemptsPerCreate: node calls (refusals and failures included) per
	// create; 1 when every create succeeds on its first node.
	AttemptsPerCreate float64 `json:"attempts_per_create"`
	RefusalsPerCreate float64 `json:"refusals_per_create"`
	// MeanFill is the mean over samples of the fleet's mean true fill
	// (fullest dimension per node): the load actually reached.
	MeanFill float64 `json:"mean_fill"`
	// MaxFill is the fullest node's fill in any sample: at most 1, since
	// a node refuses what does not fit.
	MaxFill float64 `json:"max_fill"`
	// MaxFillOverMean and P99FillOverMean are the worst over samples of
	// the fullest node's and the 99th percentile node's fill over the mean.
	MaxFillOverMean float64 `json:"max_fill_over_mean"`
	P99FillOverMean float64 `json:"p99_fill_over_mean"`
	// WarmHitRatio: placed creates that took a warm clone.
	WarmHitRatio float64 `json:"warm_hit_ratio"`
	// DecisionP50us and DecisionP99us time the real Place call, the
	// simulated node's work excluded.
	DecisionP50us float64 `json:"decision_p50_us"`
	DecisionP99us float64 `json:"decision_p99_us"`
	// DeadNodeDispatches: creates sent to a node that was down or frozen
	// and not yet swept.
	DeadNodeDispatches int64 `json:"dead_node_dispatches"`
	NodeFailures       int   `json:"node_failures"`
	// Detection is the time from a node's failure to its sweep, over the
	// failed nodes that were swept (a short freeze ends before its sweep).
	Detection Detection `json:"detection_s"`
	// LiveNodesSwept counts sweeps of a node that was running: 0 unless
	// the lease rules are wrong.
	LiveNodesSwept int `json:"live_nodes_swept"`
	// SandboxesLost: sandboxes that died with a crash or a fence.
	SandboxesLost int64   `json:"sandboxes_lost"`
	VirtualS      float64 `json:"virtual_s"`
	WallS         float64 `json:"wall_s"`
	// RSSMiB is the process's peak resident set so far.
	RSSMiB float64 `json:"rss_mib"`
}

// Detection is a summary of detection times, in seconds.
type Detection struct {
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
	Count int     `json:"count"`
}

// stats are one level's counters; Report says what each becomes.
type stats struct {
	arrivals, placed int64
	failed           map[string]int64 // creates not placed, by error code
	calls, refusals  int64            // node calls, and those refused
	warmHits         int64
	dead             int64 // calls to a crashed or frozen node
	failures         int
	// swept: failed nodes the sweeper marked lost, with the sum and
	// maximum of their detection times in seconds.
	swept             int
	detectSum, detMax float64
	liveSwept         int // running nodes marked lost: must stay 0
	lost              int64
	// Over fill samples: how many, the sum of their means, the fullest
	// node seen, and the worst fullest/mean and p99/mean.
	samples            int
	fillSum            float64
	maxFill            float64
	worstMax, worstP99 float64
	decisions          histogram
}

func (s *stats) report(load float64, m *model, virtual, wall time.Duration) Report {
	r := Report{
		Load: load, Nodes: m.cfg.Nodes, Slots: m.cfg.Slots, Creates: s.arrivals, Failed: s.failed,
		SuccessRate:        ratio(float64(s.placed), float64(s.arrivals)),
		AttemptsPerCreate:  ratio(float64(s.calls), float64(s.arrivals)),
		RefusalsPerCreate:  ratio(float64(s.refusals), float64(s.arrivals)),
		MeanFill:           ratio(s.fillSum, float64(s.samples)),
		MaxFill:            s.maxFill,
		MaxFillOverMean:    s.worstMax,
		P99FillOverMean:    s.worstP99,
		WarmHitRatio:       ratio(float64(s.warmHits), float64(s.placed)),
		DecisionP50us:      s.decisions.quantile(0.5) / 1e3,
		DecisionP99us:      s.decisions.quantile(0.99) / 1e3,
		DeadNodeDispatches: s.dead, NodeFailures: s.failures,
		Detection:      Detection{Mean: ratio(s.detectSum, float64(s.swept)), Max: s.detMax, Count: s.swept},
		LiveNodesSwept: s.liveSwept, SandboxesLost: s.lost,
		VirtualS: virtual.Seconds(), WallS: wall.Seconds(), RSSMiB: peakRSSMiB(),
	}
	return r
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// histogram counts durations in log-linear buckets: 16 per power of two,
// so a quantile is within about 3% of the truth, in constant memory.
type histogram struct {
	b [64 * 16]uint64
	n uint64
}

func (h *histogram) add(d time.Duration) {
	v := uint64(max(d, 1))
	e := bits.Len64(v) - 1
	var m uint64
	if e >= 4 {
		m = v >> (e - 4) & 15
	} else {
		m = v << (4 - e) & 15
	}
	h.b[e*16+int(m)]++
	h.n++
}

// quantile returns the q-quantile in ns (the middle of its bucket).
func (h *histogram) quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	var seen uint64
	for i, c := range h.b {
		if seen += c; seen >= rank && c > 0 {
			e, m := i/16, float64(i%16)
			return (16 + m + 0.5) * math.Ldexp(1, e) / 16
		}
	}
	return 0
}
