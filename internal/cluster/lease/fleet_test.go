package lease

import (
	"fmt"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/cluster/clock"
)

// fleet is a few nodes, a database and a sweeper on a virtual clock, run
// by the package's own rules: enough to watch leases end, amnesty and
// fencing happen in order.
type fleet struct {
	t         *testing.T
	c         Config
	clk       *clock.Manual
	rows      []Node      // the database's rows
	stored    []int64     // the epoch each daemon stored
	alive     []bool      // false: the node died and sends nothing
	lastAck   []time.Time // when each node sent its last acknowledged heartbeat
	nextBeat  []time.Time
	nextSweep time.Time
	lastSweep time.Time
	dbUp      bool
	lostAt    map[string]time.Time
	// sweptAlive counts live nodes marked lost: the failure amnesty exists
	// to prevent.
	sweptAlive int
	amnesties  []time.Time
}

const tick = 100 * time.Millisecond

func newFleet(t *testing.T, n int) *fleet {
	c := Defaults()
	f := &fleet{t: t, c: c, clk: clock.NewManual(t0), dbUp: true, lostAt: map[string]time.Time{},
		lastSweep: t0, nextSweep: t0.Add(c.SweepInterval)}
	for i := range n {
		id := fmt.Sprintf("node-%d", i)
		row, _, err := Register(Node{}, false, id, 0, t0, c.TTL)
		if err != nil {
			t.Fatal(err)
		}
		f.rows = append(f.rows, row)
		f.stored = append(f.stored, row.Epoch)
		f.alive = append(f.alive, true)
		f.lastAck = append(f.lastAck, t0)
		f.nextBeat = append(f.nextBeat, t0.Add(c.Heartbeat*time.Duration(i+1)/time.Duration(n)))
	}
	return f
}

// step advances the clock one tick and runs what is due.
func (f *fleet) step() {
	now := f.clk.Advance(tick)
	for i := range f.rows {
		if f.alive[i] && !now.Before(f.nextBeat[i]) {
			f.heartbeat(i, now)
			f.nextBeat[i] = now.Add(f.c.Heartbeat)
		}
	}
	if !now.Before(f.nextSweep) {
		f.nextSweep = now.Add(f.c.SweepInterval)
		if f.dbUp {
			f.sweep(now)
		}
	}
}

func (f *fleet) heartbeat(i int, now time.Time) {
	if !f.dbUp {
		return // no answer: the node keeps its last acknowledgement
	}
	row, ok := Renew(f.rows[i], f.stored[i], now, f.c.TTL)
	if ok {
		f.rows[i], f.lastAck[i] = row, now
		return
	}
	if NodeAction(f.lastAck[i], true, now, f.c) != Fence {
		f.t.Fatalf("node %d: a refused heartbeat did not fence", i)
	}
	row, reg, err := Register(f.rows[i], true, row.ID, f.stored[i], now, f.c.TTL)
	if err != nil || reg != Fresh {
		f.t.Fatalf("node %d: re-register after a fence: %s, %v", i, reg, err)
	}
	f.rows[i], f.stored[i], f.lastAck[i] = row, row.Epoch, now
}

func (f *fleet) sweep(now time.Time) {
	r := Sweep(f.rows, f.lastSweep, now, f.c)
	f.lastSweep = now
	if r.Amnesty {
		f.amnesties = append(f.amnesties, now)
	}
	for _, s := range r.Lost {
		f.lostAt[s.ID] = now
		if f.alive[s.Index] {
			f.sweptAlive++
		}
	}
}

// waitFor steps until cond holds, failing after limit of virtual time.
func (f *fleet) waitFor(what string, limit time.Duration, cond func() bool) {
	f.t.Helper()
	end := f.clk.Now().Add(limit)
	for !cond() {
		if f.clk.Now().After(end) {
			f.t.Fatalf("%s: not within %s of virtual time", what, limit)
		}
		f.step()
	}
}

func (f *fleet) run(d time.Duration) {
	for end := f.clk.Now().Add(d); f.clk.Now().Before(end); {
		f.step()
	}
}

// TestDeadNodeSweptWithinTTLGraceInterval kills one node at several
// moments of its heartbeat cycle: each is swept no earlier than TTL +
// grace after its last heartbeat and no later than TTL + grace + one sweep
// interval after it died; no live node is ever swept.
func TestDeadNodeSweptWithinTTLGraceInterval(t *testing.T) {
	for k := range 10 {
		f := newFleet(t, 20)
		f.run(time.Minute + time.Duration(k)*700*time.Millisecond)
		victim := 3 + k
		f.alive[victim] = false
		died, lastBeat := f.clk.Now(), f.lastAck[victim]
		id := f.rows[victim].ID
		f.waitFor(id+" swept", 2*time.Minute, func() bool { _, ok := f.lostAt[id]; return ok })
		lost := f.lostAt[id]
		bound := f.c.TTL + f.c.Grace + f.c.SweepInterval
		if got := lost.Sub(died); got > bound {
			t.Errorf("death %d: swept %s after death, want at most %s", k, got, bound)
		}
		if got := lost.Sub(lastBeat); got <= f.c.TTL+f.c.Grace {
			t.Errorf("death %d: swept %s after its last heartbeat, before TTL + grace", k, got)
		}
		f.run(time.Minute)
		if f.sweptAlive != 0 || len(f.lostAt) != 1 || len(f.amnesties) != 0 {
			t.Errorf("death %d: %d live nodes swept, %d lost in all, %d amnesties", k, f.sweptAlive, len(f.lostAt), len(f.amnesties))
		}
	}
}

// TestAmnestyAfterDatabaseOutage stops the database for two TTLs. Without
// amnesty the first sweep after it would mark every node lost; with it, no
// live node is swept, the nodes refuse creates during the outage and serve
// again after, and a node that really died just before the outage is
// swept within TTL + grace + one interval of the amnesty.
func TestAmnestyAfterDatabaseOutage(t *testing.T) {
	f := newFleet(t, 20)
	f.run(time.Minute)
	const dead = 7
	f.alive[dead] = false
	deadID := f.rows[dead].ID
	f.run(5 * time.Second)
	f.dbUp = false
	f.run(2 * f.c.TTL)
	if a := NodeAction(f.lastAck[0], false, f.clk.Now(), f.c); a != RefuseCreates {
		t.Errorf("a node cut off for 2 x TTL: %s, want refuse_creates", a)
	}
	expired := 0
	for _, r := range f.rows {
		if Expired(r, f.clk.Now(), f.c.Grace) {
			expired++
		}
	}
	if expired != len(f.rows) {
		t.Fatalf("when the database returns %d of %d leases are past their grace: the outage does not test amnesty", expired, len(f.rows))
	}
	f.dbUp = true
	f.waitFor("amnesty", time.Minute, func() bool { return len(f.amnesties) > 0 })
	f.waitFor(deadID+" swept", 2*time.Minute, func() bool { _, ok := f.lostAt[deadID]; return ok })
	bound := f.c.TTL + f.c.Grace + f.c.SweepInterval
	if got := f.lostAt[deadID].Sub(f.amnesties[0]); got > bound {
		t.Errorf("dead node swept %s after the amnesty, want at most %s", got, bound)
	}
	f.run(2 * time.Minute)
	if f.sweptAlive != 0 || len(f.lostAt) != 1 {
		t.Fatalf("%d live nodes swept after the outage (%d lost in all)", f.sweptAlive, len(f.lostAt))
	}
	if len(f.amnesties) != 1 {
		t.Errorf("%d amnesties, want 1: sweeps after the first must sweep", len(f.amnesties))
	}
	if a := NodeAction(f.lastAck[0], false, f.clk.Now(), f.c); a != Serve {
		t.Errorf("after the outage a live node: %s, want serve", a)
	}
}

// TestSweptNodeThatReturnsFencesAndRegistersAnew freezes a node past its
// sweep: on its return its heartbeat is refused, it fences and comes back
// under a new epoch that later heartbeats renew.
func TestSweptNodeThatReturnsFencesAndRegistersAnew(t *testing.T) {
	f := newFleet(t, 5)
	f.run(20 * time.Second)
	id, before := f.rows[2].ID, f.rows[2].Epoch
	f.alive[2] = false
	f.waitFor(id+" swept", time.Minute, func() bool { _, ok := f.lostAt[id]; return ok })
	if f.rows[2].State != Lost || f.rows[2].Epoch != before+1 {
		t.Fatalf("swept row %+v, want lost with epoch %d", f.rows[2], before+1)
	}
	f.alive[2] = true
	f.waitFor(id+" ready again", time.Minute, func() bool { return f.rows[2].State == Ready })
	if f.rows[2].Epoch != before+2 || f.stored[2] != before+2 {
		t.Fatalf("returned with epoch %d (stored %d), want %d", f.rows[2].Epoch, f.stored[2], before+2)
	}
	lease := f.rows[2].LeaseExpires
	f.run(2 * f.c.Heartbeat)
	if !f.rows[2].LeaseExpires.After(lease) {
		t.Fatal("heartbeats under the new epoch do not renew the lease")
	}
}
