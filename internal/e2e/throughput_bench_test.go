package e2e

import (
	"bytes"
	"fmt"
	"io"
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

// BenchmarkRestartWithLiveSandboxes measures recovery: n sandboxes are
// running, the daemon is killed with SIGKILL and restarted, and the clock
// runs from the new process's start until every sandbox has answered an
// exec (each answer proving its files survived). Run with:
//
//	go test -run XXX -bench RestartWithLiveSandboxes -benchtime 2x ./internal/e2e/
func BenchmarkRestartWithLiveSandboxes(b *testing.B) {
	e := getEnv(b)
	for _, n := range []int{4, 16} {
		b.Run(fmt.Sprintf("sandboxes=%d", n), func(b *testing.B) {
			d := startDaemon(b, e, "--max-sandboxes", "32")
			c := d.client(b, tenantA)
			sbs := make([]*client.Sandbox, n)
			for i := range sbs {
				sbs[i] = createSandbox(b, c, 600, map[string]string{"bench": "restart"})
				mustExec(b, sbs[i], "echo kept-"+sbs[i].ID+" > /job/kept")
			}
			var worst time.Duration
			for i := 0; i < b.N; i++ {
				d.crash(b)
				began := time.Now()
				d.start(b)
				up := time.Since(began)
				var wg sync.WaitGroup
				for _, s := range sbs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						// Streamed: a tenant holds at most 8 buffered execs
						// at once, and this is 16 concurrent execs of one.
						var out bytes.Buffer
						res, err := s.ExecStream(ctx(b), client.ExecRequest{Cmd: "cat /job/kept"}, &out, io.Discard)
						if err != nil || res.ExitCode != 0 || out.String() != "kept-"+s.ID+"\n" {
							b.Errorf("%s after restart: %q, %v", s.ID, out.String(), err)
						}
					}()
				}
				wg.Wait()
				took := time.Since(began)
				worst = max(worst, took)
				b.Logf("restart %d: API up after %s, all %d sandboxes answered after %s", i+1,
					up.Round(time.Millisecond), n, took.Round(time.Millisecond))
			}
			b.ReportMetric(worst.Seconds(), "s_until_all_answer_max")
		})
	}
}
