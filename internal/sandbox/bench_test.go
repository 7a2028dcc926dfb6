package sandbox_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/guest"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/vmtest"
)

// BenchmarkCreate measures Manager.Create + Kill with the warm pool (the
// daemon's path), and reports it against a cold boot measured in the same
// run: go test -run XXX -bench Create ./internal/sandbox/
func BenchmarkCreate(b *testing.B) {
	m, _ := newManager(b, sandbox.Config{WarmPool: 2})
	ctx := context.Background()
	// Baseline in the same run: one cold boot of the same template shape.
	tmpl, err := vmtest.Registry(b).Get(vmtest.TemplateName)
	if err != nil {
		b.Fatal(err)
	}
	opts := tmpl.BootOptions()
	opts.MemoryFile, opts.MemoryPrivate = "", false
	start := time.Now()
	v, err := vmtest.Host(b).Boot(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	cold := time.Since(start)
	v.Destroy(ctx)
	// Prime the pool.
	info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "bench", Template: vmtest.TemplateName})
	if err != nil {
		b.Fatal(err)
	}
	m.Kill(ctx, "bench", info.ID)
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		time.Sleep(2 * time.Second) // let the pool refill, as between requests
		b.StartTimer()
		t0 := time.Now()
		info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "bench", Template: vmtest.TemplateName})
		if err != nil {
			b.Fatal(err)
		}
		total += time.Since(t0)
		b.StopTimer()
		m.Kill(ctx, "bench", info.ID)
		b.StartTimer()
	}
	b.ReportMetric(float64(cold)/float64(total/time.Duration(b.N)), "x-faster-than-cold-boot")
}

// BenchmarkExec measures one `true` through the Manager.
func BenchmarkExec(b *testing.B) {
	m, _ := newManager(b, sandbox.Config{})
	ctx := context.Background()
	info, err := m.Create(ctx, sandbox.CreateRequest{Tenant: "bench", Template: vmtest.TemplateName})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Exec(ctx, "bench", info.ID, guest.ExecOptions{Argv: []string{"true"}}, io.Discard, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
