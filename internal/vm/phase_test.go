package vm_test

import (
	"os"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

func TestRestorePhases(t *testing.T) {
	if os.Getenv("AIRLOCK_PHASES") == "" {
		t.Skip("diagnostic; set AIRLOCK_PHASES=1")
	}
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	shape, state := bakeByHand(t, nil)
	for i := 0; i < 5; i++ {
		opts := shape
		opts.MemoryPrivate = true
		p, err := host.StartPending(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		a := time.Now()
		if err := p.Machine.LoadState(ctx, state, true); err != nil {
			t.Fatal(err)
		}
		b := time.Now()
		if err := p.Machine.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		c := time.Now()
		conn := avm.PendingConnForTest(p)
		if err := guest.HostSync(conn, time.Now().Add(10*time.Second), guest.SyncOptions{}); err != nil {
			t.Fatal(err)
		}
		d := time.Now()
		cl, err := guest.Dial(ctx, "", guest.DialOptions{First: conn})
		if err != nil {
			t.Fatal(err)
		}
		e := time.Now()
		v := &avm.VM{ID: p.ID, Machine: p.Machine, Agent: cl}
		if err := v.Prepare(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		f := time.Now()
		t.Logf("load %s resume %s sync %s dial+health %s prepare %s total %s", b.Sub(a), c.Sub(b), d.Sub(c), e.Sub(d), f.Sub(e), f.Sub(a))
		v.Destroy(ctx)
	}
}
