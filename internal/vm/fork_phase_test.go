package vm_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	avm "github.com/airlock-dev/airlock/internal/vm"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

func TestForkPhases(t *testing.T) {
	if os.Getenv("AIRLOCK_PHASES") == "" {
		t.Skip("diagnostic; set AIRLOCK_PHASES=1")
	}
	host := vmtest.Host(t)
	ctx := vmtest.Context(t)
	shape, state := bakeByHand(t, nil)
	opts := shape
	opts.MemoryPrivate = true
	p, _ := host.StartPending(ctx, opts)
	v, err := p.RestorePrepared(ctx, state, true, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer v.Destroy(ctx)
	{
		a := time.Now()
		conn, err := v.Quiesce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		full := filepath.Join(host.RunDir, "fullsave")
		if err := v.Machine.SaveState(ctx, full, false); err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(full)
		t.Logf("full save to file: %s, %d bytes", time.Since(a), fi.Size())
		os.Remove(full)
		v.Machine.Resume(ctx)
		avm.ReconnectForTest(v, ctx, conn)
	}
	for i := 0; i < 2; i++ {
		a := time.Now()
		conn, err := v.Quiesce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b := time.Now()
		fd, _ := os.MkdirTemp(host.RunDir, "forkdata-")
		defer os.RemoveAll(fd)
		ro := opts
		ro.ID = avm.NewID("fork-")
		ro.MemoryFile = filepath.Join(fd, "mem")
		ro.MemoryPrivate = false
		recv, err := host.StartPending(ctx, ro)
		if err != nil {
			t.Fatal(err)
		}
		c := time.Now()
		if err := v.Machine.MigrateTo(ctx, recv.Machine); err != nil {
			t.Fatal(err)
		}
		d := time.Now()
		if err := recv.Machine.SaveState(ctx, filepath.Join(fd, "state"), true); err != nil {
			t.Fatal(err)
		}
		e := time.Now()
		recv.Discard(ctx)
		v.Machine.Resume(ctx)
		avm.ReconnectForTest(v, ctx, conn)
		if err := v.Prepare(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		f := time.Now()
		t.Logf("quiesce %s recv start %s migrate %s save %s resume+reconnect %s", b.Sub(a), c.Sub(b), d.Sub(c), e.Sub(d), f.Sub(e))
	}
}
