package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// BenchmarkAPICreateToFirstExec measures what a user waits for: create a
// sandbox over the unix socket, run its first command, kill it. It runs
// only with -bench (it boots VMs; -short and non-root skip it too):
//
//	go test -run '^$' -bench APICreateToFirstExec -benchtime 20x ./internal/e2e/
func BenchmarkAPICreateToFirstExec(b *testing.B) {
	e := getEnv(b)
	d := startDaemon(b, e)
	c := d.client(b, tenantA)
	// One untimed round, so the warm pool is full and caches are hot.
	round := func() (toExec time.Duration) {
		began := time.Now()
		sbx, err := c.CreateSandbox(ctx(b), client.CreateOptions{Template: templateName, TTLSeconds: 120})
		if err != nil {
			b.Fatal(err)
		}
		res, err := sbx.Exec(ctx(b), "true")
		toExec = time.Since(began)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("first exec: %+v, %v", res, err)
		}
		if err := sbx.Kill(ctx(b)); err != nil {
			b.Fatal(err)
		}
		return toExec
	}
	round()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, round())
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		i := int(p*float64(len(lat)-1) + 0.5)
		return float64(lat[i].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
