package multinode

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlock-dev/airlock/client"
	"github.com/airlock-dev/airlock/internal/cluster/clustertest/multiproc"
)

// dbLoad is the load of the database fault tests: execs into a running
// sandbox and, every fourth round, a create, through one API process
// without retries, each call cut off after 2 s. What the calls did is
// counted while outage is set, across every run.
type dbLoad struct {
	outage atomic.Bool
	// execsOK and execsFailed count execs into the running sandbox;
	// refused creates answered 503; hung creates that did not answer
	// within 2 s; other creates that failed otherwise.
	execsOK, execsFailed, refused, hung, other atomic.Int64
	// slowest is the longest create (ns) that answered 503.
	slowest atomic.Int64
	// firstOther is the first create error counted in other.
	firstOther atomic.Value
}

// run starts the load on sandbox sb through API process api; the function
// it returns stops it and waits until it has stopped.
func (l *dbLoad) run(c *multiproc.Cluster, api int, sb string) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := c.Client(api, client.WithRetries(0))
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			default:
			}
			l.round(cl, sb, k%4 == 0)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (l *dbLoad) round(cl *client.Client, sb string, create bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := cl.Sandbox(sb).Exec(ctx, "true")
	switch {
	case !l.outage.Load():
	case err != nil:
		l.execsFailed.Add(1)
	default:
		l.execsOK.Add(1)
	}
	if !create {
		return
	}
	began := time.Now()
	s, err := cl.CreateSandbox(ctx, client.CreateOptions{Template: "base"})
	took := time.Since(began)
	switch {
	case err == nil:
		_ = s.Kill(ctx)
	case !l.outage.Load():
	case errors.Is(err, client.ErrUnavailable):
		l.refused.Add(1)
		for {
			old := l.slowest.Load()
			if int64(took) <= old || l.slowest.CompareAndSwap(old, int64(took)) {
				break
			}
		}
	case ctx.Err() != nil:
		l.hung.Add(1)
	default:
		l.other.Add(1)
		l.firstOther.CompareAndSwap(nil, err.Error())
	}
}

// outlastLease returns once TTL + grace have passed since down: a
// database away that long would have every node swept when it is back,
// but for amnesty.
func outlastLease(down time.Time) {
	for time.Since(down) < multiproc.TestLease.TTL+multiproc.TestLease.Grace {
		time.Sleep(50 * time.Millisecond)
	}
}

// createsBack waits until a create through API process 0 succeeds and
// returns how long after since that was.
func createsBack(c *multiproc.Cluster, since time.Time) time.Duration {
	ctx := context.Background()
	c.WaitFor("creates recover", func() bool {
		s, err := c.Client(0, client.WithRetries(0)).CreateSandbox(ctx, client.CreateOptions{Template: "base"})
		if err != nil {
			return false
		}
		_ = s.Kill(ctx)
		return true
	})
	return time.Since(since)
}
