package e2e

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

// BenchmarkAPICreateThroughput measures sustained creates per second
// through the daemon's API (create + kill, over the unix socket) with 1, 4
// and 16 concurrent clients. Run with:
//
//	go test -run XXX -bench APICreateThroughput -benchtime 40x ./internal/e2e/
func BenchmarkAPICreateThroughput(b *testing.B) {
	e := getEnv(b)
	d := startDaemon(b, e, "--max-sandboxes", "32")
	c := d.client(b, tenantA)
	for _, conc := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("concurrency=%d", conc), func(b *testing.B) {
			var next atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, conc)
			began := time.Now()
			for w := 0; w < conc; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						sbx, err := c.CreateSandbox(ctx(b), client.CreateOptions{Template: templateName, TTLSeconds: 120})
						if err != nil {
							errs <- err
							return
						}
						if err := sbx.Kill(ctx(b)); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(began)
			close(errs)
			for err := range errs {
				b.Fatal(err)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "creates/s")
		})
	}
}
