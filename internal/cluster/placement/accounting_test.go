package placement

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clock"
	"github.com/airlock-dev/airlock/internal/errdefs"
)

// small is a node with room for two creates of testReq.
func small(i int) NodeView {
	v := roomy(i)
	v.Capacity.Slots = 2
	return v
}

func TestInflightCountsUntilAHeartbeatCoversIt(t *testing.T) {
	p, clk := newTestPlacer(t, small(1))
	for range 2 {
		if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
			t.Fatal(err)
		}
	}
	// No heartbeat yet: the two in-flight creates fill the node.
	if _, err := p.Place(context.Background(), testReq(), ok); errdefs.Class(err) != errdefs.ErrResourceExhausted {
		t.Fatalf("third create before any heartbeat: %v, want resource_exhausted", err)
	}
	// A heartbeat measured after both finished, reporting them: still full.
	clk.Advance(5 * time.Second)
	v := small(1)
	v.HeartbeatAt, v.LeaseExpires = clk.Now(), clk.Now().Add(30*time.Second)
	v.Used = Resources{Slots: 2, MemMiB: 4096, VCPUs: 4}
	p.UpdateNode(v)
	if _, err := p.Place(context.Background(), testReq(), ok); errdefs.Class(err) != errdefs.ErrResourceExhausted {
		t.Fatalf("after a heartbeat reporting both: %v, want resource_exhausted", err)
	}
	// Both ended: the next heartbeat reports nothing, and nothing else
	// counts any more.
	clk.Advance(5 * time.Second)
	v.HeartbeatAt, v.LeaseExpires = clk.Now(), clk.Now().Add(30*time.Second)
	v.Used = Resources{}
	p.UpdateNode(v)
	for i := range 2 {
		if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
			t.Fatalf("create %d after the node emptied: %v", i, err)
		}
	}
}

func TestInflightDroppedAfterTwoHeartbeatsThatDoNotCoverIt(t *testing.T) {
	v := small(1)
	v.HeartbeatAt = t0.Add(-2 * time.Minute)
	p, clk := newTestPlacer(t, v)
	for range 2 {
		if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
			t.Fatal(err)
		}
	}
	// The node's clock runs a minute behind: its heartbeats say they were
	// measured before the creates finished, so they never cover them.
	for beat := 1; beat <= 2; beat++ {
		clk.Advance(5 * time.Second)
		v.HeartbeatAt = clk.Now().Add(-time.Minute + time.Duration(beat)*time.Second)
		v.LeaseExpires = clk.Now().Add(30 * time.Second)
		p.UpdateNode(v)
		_, err := p.Place(context.Background(), testReq(), ok)
		if beat == 1 && errdefs.Class(err) != errdefs.ErrResourceExhausted {
			t.Fatalf("after one uncovering heartbeat: %v, want still full", err)
		}
		if beat == 2 && err != nil {
			t.Fatalf("after two heartbeats: %v, want the in-flight creates dropped", err)
		}
	}
	// An update that is not a newer heartbeat (a state change) drops nothing.
	p.UpdateNode(v)
	if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Place(context.Background(), testReq(), ok); errdefs.Class(err) != errdefs.ErrResourceExhausted {
		t.Fatalf("a repeated view dropped in-flight creates: %v", err)
	}
}

func TestFailedCallsLeaveNoInflight(t *testing.T) {
	p, _ := newTestPlacer(t, small(1), small(2))
	for _, answer := range []error{errdefs.ResourceExhausted("full"), errdefs.InvalidArgument("bad")} {
		p.Place(context.Background(), testReq(), func(context.Context, Attempt) error { return answer })
	}
	// Neither node holds anything in flight: each still takes two.
	for i := range 4 {
		if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
}

func TestScorePrefersWarmThenLessLoaded(t *testing.T) {
	warm, cold := roomy(1), roomy(2)
	warm.Builds = []BuildState{{Build: "b1", Ready: true, Warm: 1}}
	p, _ := newTestPlacer(t, warm, cold)
	var got []string
	for range 2 {
		res, err := p.Place(context.Background(), testReq(), ok)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Node)
	}
	// The first takes the warm clone; the second knows it is taken (one
	// create since the report) and goes to the emptier node.
	if got[0] != warm.ID || got[1] != cold.ID {
		t.Fatalf("placed on %v, want %s (warm) then %s (warm clone taken, less loaded)", got, warm.ID, cold.ID)
	}
}

func TestScoreWeighsCPUAndLocality(t *testing.T) {
	busy, idle := roomy(1), roomy(2)
	busy.CPUUsage, idle.CPUUsage = 0.9, 0.1
	p, _ := newTestPlacer(t, busy, idle)
	if res, _ := p.Place(context.Background(), testReq(), ok); res.Node != idle.ID {
		t.Errorf("chose %s, want the idle CPU %s", res.Node, idle.ID)
	}
	local, remote := roomy(3), roomy(4)
	remote.Builds = nil
	p, _ = newTestPlacer(t, remote, local)
	req := testReq()
	req.AllowPull = true
	// Each create adds 2048/(64 GiB x 1.5) = 0.0208 of memory load: four
	// in flight (0.083) stay under the 0.1 bonus, five (0.104) do not.
	for i := range 5 {
		if res, _ := p.Place(context.Background(), req, ok); res.Node != local.ID {
			t.Fatalf("create %d: chose %s, want %s with the build local", i, res.Node, local.ID)
		}
	}
	if res, _ := p.Place(context.Background(), req, ok); res.Node != remote.ID {
		t.Fatalf("chose %s, want %s once local is 0.104 fuller", res.Node, remote.ID)
	}
}

func TestSameSeedSameChoices(t *testing.T) {
	run := func(seed uint64) []string {
		var views []NodeView
		for i := range 200 {
			v := roomy(i)
			v.Used.Slots = i % 50
			views = append(views, v)
		}
		p, err := NewPlacer(DefaultConfig(), clock.NewManual(t0), rand.New(rand.NewPCG(seed, 7)))
		if err != nil {
			t.Fatal(err)
		}
		p.SetView(views)
		var got []string
		for range 300 {
			res, err := p.Place(context.Background(), testReq(), ok)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, res.Node)
		}
		return got
	}
	a, b, c := run(1), run(1), run(2)
	same := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("choice %d differs with the same seed: %s vs %s", i, a[i], b[i])
		}
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Fatal("another seed made the very same choices: the seed is not used")
	}
}

func TestSetViewKeepsInflightAndBreaker(t *testing.T) {
	p, _ := newTestPlacer(t, small(1), small(2), small(3))
	p.MarkUnreachable(hostID(3))
	for range 4 {
		if _, err := p.Place(context.Background(), testReq(), ok); err != nil {
			t.Fatal(err)
		}
	}
	// The same rows again (a refresh without new heartbeats), plus a new node.
	p.SetView([]NodeView{small(1), small(2), small(3), small(4)})
	s := &script{}
	for range 2 {
		if _, err := p.Place(context.Background(), testReq(), s.dispatch); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range s.got {
		if a.Node != hostID(4) {
			t.Fatalf("after a refresh, a create went to %s: in-flight or breaker forgotten", a.Node)
		}
	}
}

func TestConcurrentPlacesNeverOverfill(t *testing.T) {
	var views []NodeView
	for i := range 20 {
		views = append(views, small(i))
	}
	p, _ := newTestPlacer(t, views...)
	var mu sync.Mutex
	placed := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				res, err := p.Place(context.Background(), testReq(), ok)
				if err != nil {
					continue
				}
				mu.Lock()
				placed[res.Node]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for id, n := range placed {
		if n > 2 {
			t.Errorf("%s got %d creates with room for 2", id, n)
		}
		total += n
	}
	if total != 40 {
		t.Errorf("%d creates placed, want all 40 slots used", total)
	}
}

func TestDecisionAllocatesNothing(t *testing.T) {
	p, clk, views, byID := bigCluster(t, 1000)
	req := testReq()
	allocs := testing.AllocsPerRun(2000, func() {
		res, err := p.Place(context.Background(), req, ok)
		if err != nil {
			t.Fatal(err)
		}
		v := &views[byID[res.Node]]
		v.HeartbeatAt = clk.Advance(time.Millisecond)
		p.UpdateNode(*v)
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per create and heartbeat, want 0", allocs)
	}
}

// bigCluster is n nodes at mixed fill with 16 builds each.
func bigCluster(t testing.TB, n int) (*Placer, *clock.Manual, []NodeView, map[string]int) {
	rng := rand.New(rand.NewPCG(3, 4))
	var views []NodeView
	byID := map[string]int{}
	for i := range n {
		v := roomy(i)
		v.Capacity = Resources{Slots: 16384, MemMiB: 4 << 20, VCPUs: 4096}
		v.Used = Resources{Slots: rng.IntN(16000), MemMiB: rng.Int64N(5 << 20), VCPUs: rng.IntN(16000)}
		v.LeaseExpires = t0.Add(time.Hour)
		v.CPUUsage = rng.Float64()
		v.Builds = nil
		for b := range 16 {
			v.Builds = append(v.Builds, BuildState{Build: "b" + string(rune('a'+b)), Ready: true, Warm: rng.IntN(3)})
		}
		v.Builds[3].Build = "b1"
		byID[v.ID] = len(views)
		views = append(views, v)
	}
	p, clk := newTestPlacer(t, views...)
	return p, clk, views, byID
}

func BenchmarkPlace1000Nodes(b *testing.B) {
	p, clk, views, byID := bigCluster(b, 1000)
	req := testReq()
	b.ReportAllocs()
	for b.Loop() {
		res, err := p.Place(context.Background(), req, ok)
		if err != nil {
			b.Fatal(err)
		}
		v := &views[byID[res.Node]]
		v.HeartbeatAt = clk.Advance(time.Millisecond)
		p.UpdateNode(*v)
	}
}

func BenchmarkChoose1000Nodes(b *testing.B) {
	p, _, _, _ := bigCluster(b, 1000)
	req := testReq()
	now := t0.UnixNano()
	for b.Loop() {
		p.mu.Lock()
		w := p.ids.wantOf(&req)
		p.choose(&w, nil, now)
		p.mu.Unlock()
	}
}
