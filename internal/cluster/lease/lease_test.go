package lease

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

var t0 = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func TestDefaultsAreValid(t *testing.T) {
	c := Defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{5 * time.Second, 30 * time.Second, 10 * time.Second, 2 * time.Second, 5 * time.Minute}
	if c != want {
		t.Fatalf("Defaults = %+v, want %+v", c, want)
	}
}

func TestValidateRefusesContradictions(t *testing.T) {
	for name, mutate := range map[string]func(*Config){
		"heartbeat at TTL/2":         func(c *Config) { c.Heartbeat = 15 * time.Second },
		"sweep at TTL/2":             func(c *Config) { c.SweepInterval = 15 * time.Second },
		"fence before sweep":         func(c *Config) { c.FenceAfter = 39 * time.Second },
		"zero TTL":                   func(c *Config) { c.TTL = 0 },
		"negative grace":             func(c *Config) { c.Grace = -time.Second },
		"negative fence-after":       func(c *Config) { c.FenceAfter = -time.Second },
		"zero heartbeat":             func(c *Config) { c.Heartbeat = 0 },
		"zero sweep interval":        func(c *Config) { c.SweepInterval = 0 },
		"fence-after just too short": func(c *Config) { c.FenceAfter = 40*time.Second - 1 },
	} {
		c := Defaults()
		mutate(&c)
		if err := c.Validate(); !errdefs.IsInvalidArgument(err) {
			t.Errorf("%s: Validate = %v, want invalid_argument", name, err)
		}
	}
	c := Defaults()
	c.FenceAfter = 0 // disabled is allowed
	if err := c.Validate(); err != nil {
		t.Errorf("fence-after 0: %v", err)
	}
}

func TestExpired(t *testing.T) {
	grace := 10 * time.Second
	for _, tc := range []struct {
		name  string
		state State
		lease time.Duration // lease end relative to now
		want  bool
	}{
		{"live lease", Ready, 5 * time.Second, false},
		{"ended within grace", Ready, -5 * time.Second, false},
		{"ended exactly grace ago", Ready, -grace, false},
		{"ended past grace", Ready, -grace - time.Nanosecond, true},
		{"draining past grace", Draining, -time.Minute, true},
		{"lost is never swept again", Lost, -time.Hour, false},
		{"left is never swept", Left, -time.Hour, false},
	} {
		n := Node{ID: "n", State: tc.state, Epoch: 3, LeaseExpires: at(tc.lease)}
		if got := Expired(n, t0, grace); got != tc.want {
			t.Errorf("%s: Expired = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSweepMarksExpiredLostWithNewEpoch(t *testing.T) {
	c := Defaults()
	nodes := []Node{
		{ID: "a", State: Ready, Epoch: 1, LeaseExpires: at(-11 * time.Second)},
		{ID: "b", State: Ready, Epoch: 4, LeaseExpires: at(20 * time.Second)},
		{ID: "c", State: Draining, Epoch: 2, LeaseExpires: at(-time.Minute)},
		{ID: "d", State: Lost, Epoch: 7, LeaseExpires: at(-time.Hour)},
	}
	r := Sweep(nodes, at(-c.SweepInterval), t0, c)
	if r.Amnesty {
		t.Fatal("a sweep 2 s after the last one granted amnesty")
	}
	if len(r.Lost) != 2 || r.Lost[0].ID != "a" || r.Lost[0].OldEpoch != 1 || r.Lost[1].ID != "c" || r.Lost[1].OldEpoch != 2 {
		t.Fatalf("lost = %+v, want a (epoch 1) and c (epoch 2)", r.Lost)
	}
	for i, want := range []struct {
		state State
		epoch int64
	}{{Lost, 2}, {Ready, 4}, {Lost, 3}, {Lost, 7}} {
		if nodes[i].State != want.state || nodes[i].Epoch != want.epoch {
			t.Errorf("node %s = %s/%d, want %s/%d", nodes[i].ID, nodes[i].State, nodes[i].Epoch, want.state, want.epoch)
		}
	}
}

func TestSweepGrantsAmnestyAfterAGap(t *testing.T) {
	c := Defaults()
	for _, tc := range []struct {
		name    string
		gap     time.Duration
		amnesty bool
	}{
		{"regular interval", c.SweepInterval, false},
		{"exactly TTL/2", c.TTL / 2, false},
		{"just over TTL/2", c.TTL/2 + time.Millisecond, true},
		{"two TTLs", 2 * c.TTL, true},
		{"no sweep ever", t0.Sub(time.Time{}), true},
	} {
		nodes := []Node{
			{ID: "old", State: Ready, Epoch: 1, LeaseExpires: at(-time.Minute)},
			{ID: "long", State: Ready, Epoch: 1, LeaseExpires: at(time.Hour)},
			{ID: "gone", State: Left, Epoch: 1, LeaseExpires: at(-time.Hour)},
		}
		r := Sweep(nodes, t0.Add(-tc.gap), t0, c)
		if r.Amnesty != tc.amnesty {
			t.Errorf("%s: amnesty = %v, want %v", tc.name, r.Amnesty, tc.amnesty)
			continue
		}
		if !tc.amnesty {
			continue
		}
		if len(r.Lost) != 0 || nodes[0].State != Ready {
			t.Errorf("%s: amnesty swept %+v", tc.name, r.Lost)
		}
		if !nodes[0].LeaseExpires.Equal(at(c.TTL)) {
			t.Errorf("%s: expired lease extended to %v, want now+TTL", tc.name, nodes[0].LeaseExpires)
		}
		if !nodes[1].LeaseExpires.Equal(at(time.Hour)) {
			t.Errorf("%s: a longer lease was shortened to %v", tc.name, nodes[1].LeaseExpires)
		}
		if !nodes[2].LeaseExpires.Equal(at(-time.Hour)) {
			t.Errorf("%s: a left node's lease was extended", tc.name)
		}
	}
}

func TestRenew(t *testing.T) {
	ttl := 30 * time.Second
	for _, tc := range []struct {
		name  string
		row   Node
		epoch int64
		want  bool
	}{
		{"current epoch, ready", Node{State: Ready, Epoch: 5, LeaseExpires: at(10 * time.Second)}, 5, true},
		{"current epoch, draining", Node{State: Draining, Epoch: 5, LeaseExpires: at(10 * time.Second)}, 5, true},
		{"ended but not swept yet", Node{State: Ready, Epoch: 5, LeaseExpires: at(-35 * time.Second)}, 5, true},
		{"old epoch (swept and re-registered)", Node{State: Ready, Epoch: 6, LeaseExpires: at(10 * time.Second)}, 5, false},
		{"swept: lost", Node{State: Lost, Epoch: 6}, 6, false},
		{"left", Node{State: Left, Epoch: 5}, 5, false},
	} {
		got, ok := Renew(tc.row, tc.epoch, t0, ttl)
		if ok != tc.want {
			t.Errorf("%s: accepted = %v, want %v", tc.name, ok, tc.want)
			continue
		}
		switch {
		case ok && (!got.LeaseExpires.Equal(at(ttl)) || !got.HeartbeatAt.Equal(t0) || got.Epoch != tc.row.Epoch || got.State != tc.row.State):
			t.Errorf("%s: renewed row = %+v", tc.name, got)
		case !ok && got != tc.row:
			t.Errorf("%s: a refused renewal changed the row to %+v", tc.name, got)
		}
	}
}

func TestRegister(t *testing.T) {
	ttl := 30 * time.Second
	for _, tc := range []struct {
		name      string
		row       Node
		exists    bool
		epoch     int64 // the one the daemon stored
		want      Registration
		wantEpoch int64
		wantState State
	}{
		{"first time", Node{}, false, 0, Fresh, 1, Ready},
		{"restart with VMs kept", Node{State: Ready, Epoch: 4, LeaseExpires: at(20 * time.Second)}, true, 4, Renewed, 4, Ready},
		{"restart while draining", Node{State: Draining, Epoch: 4, LeaseExpires: at(20 * time.Second)}, true, 4, Renewed, 4, Draining},
		{"after being swept", Node{State: Lost, Epoch: 5}, true, 4, Fresh, 6, Ready},
		{"swept, presents the new epoch it never saw", Node{State: Lost, Epoch: 5}, true, 5, Fresh, 6, Ready},
		{"after leaving", Node{State: Left, Epoch: 2}, true, 2, Fresh, 3, Ready},
		{"lease ended, not swept yet", Node{State: Ready, Epoch: 4, LeaseExpires: at(-time.Second)}, true, 0, Fresh, 5, Ready},
		{"lease ends right now", Node{State: Ready, Epoch: 4, LeaseExpires: t0}, true, 3, Fresh, 5, Ready},
		{"stored epoch stale, lease ended", Node{State: Ready, Epoch: 4, LeaseExpires: at(-time.Second)}, true, 3, Fresh, 5, Ready},
	} {
		got, reg, err := Register(tc.row, tc.exists, "node-1", tc.epoch, t0, ttl)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if reg != tc.want || got.Epoch != tc.wantEpoch || got.State != tc.wantState || got.ID != "node-1" && tc.want == Fresh {
			t.Errorf("%s: %s epoch %d state %s, want %s epoch %d state %s", tc.name, reg, got.Epoch, got.State, tc.want, tc.wantEpoch, tc.wantState)
		}
		if !got.LeaseExpires.Equal(at(ttl)) || !got.HeartbeatAt.Equal(t0) {
			t.Errorf("%s: lease %v heartbeat %v, want now+TTL and now", tc.name, got.LeaseExpires, got.HeartbeatAt)
		}
	}
}

func TestRegisterRefusesAnotherClaimantOfALiveLease(t *testing.T) {
	row := Node{ID: "node-1", State: Ready, Epoch: 4, LeaseExpires: at(20 * time.Second)}
	for _, epoch := range []int64{0, 3, 5} {
		got, reg, err := Register(row, true, "node-1", epoch, t0, 30*time.Second)
		if !errdefs.IsFailedPrecondition(err) || reg != 0 || got != row {
			t.Errorf("epoch %d: %s, %v, row %+v; want failed_precondition and the row unchanged", epoch, reg, err, got)
			continue
		}
		if !strings.Contains(err.Error(), "node-1 holds a lease until 2026-12-03T12:00:20Z") {
			t.Errorf("message %q does not say who holds the lease until when", err)
		}
	}
}

func TestFenceOnRegister(t *testing.T) {
	for _, tc := range []struct {
		stored int64
		reg    Registration
		want   bool
	}{{0, Fresh, false}, {3, Fresh, true}, {3, Renewed, false}} {
		if got := FenceOnRegister(tc.stored, tc.reg); got != tc.want {
			t.Errorf("FenceOnRegister(%d, %s) = %v, want %v", tc.stored, tc.reg, got, tc.want)
		}
	}
}

func TestNodeAction(t *testing.T) {
	c := Defaults()
	for _, tc := range []struct {
		name       string
		silent     time.Duration
		swept      bool
		fenceAfter time.Duration
		want       Action
	}{
		{"just acknowledged", 0, false, c.FenceAfter, Serve},
		{"one heartbeat missed", 10 * time.Second, false, c.FenceAfter, Serve},
		{"exactly TTL/2", c.TTL / 2, false, c.FenceAfter, Serve},
		{"past TTL/2", c.TTL/2 + time.Millisecond, false, c.FenceAfter, RefuseCreates},
		{"four minutes", 4 * time.Minute, false, c.FenceAfter, RefuseCreates},
		{"past fence-after", c.FenceAfter + time.Millisecond, false, c.FenceAfter, Fence},
		{"fence-after disabled", time.Hour, false, 0, RefuseCreates},
		{"told it was swept", 0, true, c.FenceAfter, Fence},
	} {
		c.FenceAfter = tc.fenceAfter
		if got := NodeAction(t0, tc.swept, t0.Add(tc.silent), c); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestRenewAndSweepNeverBothWin races a heartbeat against a sweep on one
// row, 1,000 random cases, each in both orders (the row lock serializes
// them; either may get it first). The times are close together, as in a
// real race, and the lease is around the sweep's threshold, so both
// outcomes happen.
func TestRenewAndSweepNeverBothWin(t *testing.T) {
	c := Defaults()
	rng := rand.New(rand.NewPCG(30, 1))
	wins := map[string]int{}
	for i := range 1000 {
		row := Node{ID: "n", State: Ready, Epoch: rng.Int64N(5) + 1}
		if rng.IntN(10) == 0 {
			row.State = Draining
		}
		row.LeaseExpires = at(-c.Grace + time.Duration(rng.Int64N(int64(6*time.Second))) - 3*time.Second)
		renewAt := at(time.Duration(rng.Int64N(int64(time.Second))))
		sweepAt := at(time.Duration(rng.Int64N(int64(time.Second))))
		for _, renewFirst := range []bool{true, false} {
			renewed, swept := race(row, row.Epoch, renewAt, sweepAt, renewFirst, c)
			if renewed && swept {
				t.Fatalf("case %d (renew first %v): both won on %+v", i, renewFirst, row)
			}
			if !renewed && !swept {
				t.Fatalf("case %d (renew first %v): neither won on %+v", i, renewFirst, row)
			}
			if renewed {
				wins["renew"]++
			} else {
				wins["sweep"]++
			}
		}
	}
	if wins["renew"] < 100 || wins["sweep"] < 100 {
		t.Fatalf("wins %v: the cases do not exercise both outcomes", wins)
	}
}

// race applies a renewal and a sweep to one row in the given order and
// reports which succeeded.
func race(row Node, epoch int64, renewAt, sweepAt time.Time, renewFirst bool, c Config) (renewed, swept bool) {
	rows := []Node{row}
	renew := func() { rows[0], renewed = Renew(rows[0], epoch, renewAt, c.TTL) }
	sweep := func() { swept = len(Sweep(rows, sweepAt.Add(-c.SweepInterval), sweepAt, c).Lost) == 1 }
	if renewFirst {
		renew()
		sweep()
	} else {
		sweep()
		renew()
	}
	return renewed, swept
}
