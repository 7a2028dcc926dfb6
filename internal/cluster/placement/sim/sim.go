package sim

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clock"
	"github.com/airlock-dev/airlock/internal/cluster/lease"
	"github.com/airlock-dev/airlock/internal/cluster/placement"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// model is what every level of a Sim shares; immutable after New.
type model struct {
	cfg      Config
	tmpls    []template
	reqs     []placement.Request // one per template
	capacity placement.Resources
	memCap   float64 // capacity.MemMiB x Rm: what a node may reserve
	vcpuCap  float64 // capacity.VCPUs x Rc
	life     lifetime
	// cdf[k] is the probability of templates 0..k: the Zipf law as a
	// table, cheaper to draw from than rand.Zipf's rejection sampling.
	cdf []float64
	ids []string // node i is named ids[i]: idPrefix and i in decimal
}

// Sim runs the levels of one Config. Its nodes' heaps are allocated once
// and reused by every level, so a run's memory is one level's.
type Sim struct {
	m     model
	nodes []simNode
}

// New checks cfg and allocates the fleet.
func New(cfg Config) (*Sim, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{m: model{cfg: cfg}}
	m := &s.m
	m.tmpls = cfg.mix()
	m.capacity = cfg.capacity(m.tmpls)
	m.memCap = float64(m.capacity.MemMiB) * cfg.Placement.MemOvercommit
	m.vcpuCap = float64(m.capacity.VCPUs) * cfg.Placement.VCPUOvercommit
	m.life = newLifetime(&cfg)
	sum := 0.0
	for _, t := range m.tmpls {
		sum += t.p
		m.cdf = append(m.cdf, sum)
		m.reqs = append(m.reqs, placement.Request{Template: t.name, Build: t.build, HostClass: hostClass,
			MemMiB: t.memMiB, VCPUs: t.vcpus, Capabilities: t.caps})
	}
	s.nodes = make([]simNode, cfg.Nodes)
	for i := range s.nodes {
		m.ids = append(m.ids, fmt.Sprintf("%s%04d", idPrefix, i))
		s.nodes[i].ends = make(endHeap, 0, cfg.Slots)
		s.nodes[i].warm = make([]int64, cfg.Templates*cfg.WarmPerTemplate)
	}
	return s, nil
}

const idPrefix = "node-"

// nodeIndex is the index of the node named id: its digits, read without
// the map lookup a create would otherwise pay.
func nodeIndex(id string) int {
	i := 0
	for _, c := range id[len(idPrefix):] {
		i = i*10 + int(c-'0')
	}
	return i
}

// pickTemplate draws a template by popularity.
func (m *model) pickTemplate(rng *rand.Rand) int {
	u := rng.Float64()
	for k, c := range m.cdf {
		if u < c {
			return k
		}
	}
	return len(m.cdf) - 1 // u just below 1 against a sum rounded below it
}

// hostClass is every simulated node's: one class, so the filter passes on
// it and the simulation measures load, not fragmentation.
const hostClass = "x86_64-kvm"

// Run runs every level of cfg in order, calling each (if not nil) with
// each level's report as it is done.
func Run(cfg Config, each func(Report)) ([]Report, error) {
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	var out []Report
	for _, load := range cfg.Loads {
		r, err := s.RunLevel(load)
		if err != nil {
			return out, err
		}
		if each != nil {
			each(r)
		}
		out = append(out, r)
	}
	return out, nil
}

// level is one load level's run.
type level struct {
	m     *model
	load  float64
	nodes []simNode
	rng   *rand.Rand // the workload's and the failures' randomness
	clk   *clock.Manual
	start time.Time // virtual time 0
	now   int64     // virtual ns since start
	end   int64     // when the churn ends
	// placers are the API replicas, each with its own in-flight creates
	// and unreachable nodes; an arrival goes to one at random.
	placers []*placement.Placer
	rows    []lease.Node         // the database's node rows
	views   []placement.NodeView // what each node last reported
	q       events
	// lastSweep is when the sweeper last ran, for amnesty.
	lastSweep   time.Time
	nextArrival int64
	arrivalGap  float64 // mean ns between arrivals
	failureGap  float64 // mean ns between failures in the fleet
	// cur is the create being placed: what dispatch makes.
	cur struct {
		tmpl int
		end  int64
	}
	dispatch   placement.Dispatch // l.create, bound once
	inDispatch time.Duration      // wall time in dispatch during the current Place
	fills      []float64          // scratch for samples
	st         stats
}

// RunLevel runs one load level: prefill, then one churn.
func (s *Sim) RunLevel(load float64) (Report, error) {
	if !(load > 0 && load < 1) {
		return Report{}, errdefs.InvalidArgument("load %g must be between 0 and 1", load)
	}
	wall := time.Now()
	l, err := s.newLevel(load)
	if err != nil {
		return Report{}, err
	}
	l.prefill()
	l.startFleet()
	l.run()
	return l.st.report(load, l.m, time.Duration(l.end), time.Since(wall)), nil
}

func (s *Sim) newLevel(load float64) (*level, error) {
	cfg := &s.m.cfg
	seed := math.Float64bits(load)
	l := &level{
		m: &s.m, load: load, nodes: s.nodes,
		rng:   rand.New(rand.NewPCG(cfg.Seed, seed)),
		start: time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC),
		rows:  make([]lease.Node, cfg.Nodes), views: make([]placement.NodeView, cfg.Nodes),
		fills: make([]float64, 0, cfg.Nodes),
	}
	l.st.failed = map[string]int64{}
	l.clk = clock.NewManual(l.start)
	for r := range cfg.Replicas {
		p, err := placement.NewPlacer(cfg.Placement, l.clk, rand.New(rand.NewPCG(cfg.Seed^0x9e3779b97f4a7c15+uint64(r), seed)))
		if err != nil {
			return nil, err
		}
		l.placers = append(l.placers, p)
	}
	l.dispatch = l.create
	l.end = int64(cfg.Churn * s.m.life.mean)
	l.arrivalGap = s.m.life.mean / (load * float64(cfg.Nodes*cfg.Slots))
	if rate := cfg.FailuresPerNodeHour * float64(cfg.Nodes); rate > 0 {
		l.failureGap = float64(time.Hour) / rate
	}
	return l, nil
}

// run is the event loop: the next event or the next arrival, whichever
// comes first, until the churn ends.
func (l *level) run() {
	for {
		ev, ok := l.q.next()
		if ok && ev.at <= l.nextArrival {
			if ev.at > l.end {
				return
			}
			l.q.pop()
			l.advance(ev.at)
			l.handle(ev)
			continue
		}
		if l.nextArrival > l.end {
			return
		}
		l.advance(l.nextArrival)
		l.arrive()
		l.nextArrival += int64(l.rng.ExpFloat64()*l.arrivalGap) + 1
	}
}

func (l *level) advance(t int64) {
	l.now = t
	l.clk.Set(l.at(t))
}

// at is virtual ns t as a time.
func (l *level) at(t int64) time.Time { return l.start.Add(time.Duration(t)) }

func (l *level) handle(ev event) {
	switch ev.kind {
	case evBeat:
		l.beat(int(ev.node))
	case evSweep:
		l.sweep()
	case evSample:
		l.sample()
	case evFail:
		l.fail()
	case evRecover:
		l.recover(int(ev.node))
	}
}

// arrive places one create, timing the real Place call without the
// simulated node's work.
func (l *level) arrive() {
	t := l.m.pickTemplate(l.rng)
	l.cur.tmpl, l.cur.end = t, l.now+l.m.life.draw(l.rng)
	l.st.arrivals++
	p := l.placers[l.rng.IntN(len(l.placers))]
	l.inDispatch = 0
	w := time.Now()
	_, err := p.Place(context.Background(), l.m.reqs[t], l.dispatch)
	l.st.decisions.add(time.Since(w) - l.inDispatch)
	if err != nil {
		l.st.failed[errdefs.Code(err)]++
		return
	}
	l.st.placed++
}

// The errors a simulated node answers with, made once.
var (
	errFull        = errdefs.ResourceExhausted("node full")
	errDown        = fmt.Errorf("%w: %w", errdefs.Unavailable("connection refused"), placement.ErrNoAnswer)
	errHung        = fmt.Errorf("%w: %w", errdefs.DeadlineExceeded("node call timed out"), placement.ErrNoAnswer)
	errUnconfirmed = errdefs.Unavailable("node lease not confirmed")
)

// create is the Dispatch: the node's side of a create.
func (l *level) create(_ context.Context, a placement.Attempt) error {
	w := time.Now()
	err := l.createOn(nodeIndex(a.Node))
	l.inDispatch += time.Since(w)
	return err
}

func (l *level) createOn(i int) error {
	n := &l.nodes[i]
	l.st.calls++
	switch n.status {
	case crashed:
		l.st.dead++
		return errDown
	case frozen:
		l.st.dead++
		return errHung
	}
	if lease.NodeAction(l.at(n.lastAck), false, l.at(l.now), l.m.cfg.Lease) != lease.Serve {
		return errUnconfirmed
	}
	n.expire(l.now, l.m.tmpls)
	t := &l.m.tmpls[l.cur.tmpl]
	if !n.fits(t, l.m) {
		l.st.refusals++
		return errFull
	}
	n.add(l.cur.end, l.cur.tmpl, t)
	if n.takeWarm(l.cur.tmpl, l.m.cfg.WarmPerTemplate, l.now, int64(l.m.cfg.WarmRefill)) {
		l.st.warmHits++
	}
	return nil
}
