package e2e

import (
	"testing"
	"time"

	"github.com/airlock-dev/airlock/client"
)

func TestProbeKillDuringExec(t *testing.T) {
	e := getEnv(t)
	d := startDaemon(t, e)
	c := d.client(t, tenantA)
	sbx := createSandbox(t, c, 5, nil)
	other := createSandbox(t, c, 5, nil)
	done := make(chan error, 1)
	go func() {
		_, err := sbx.Exec(ctx(t), "sleep 40")
		done <- err
	}()
	time.Sleep(time.Second)
	began := time.Now()
	for time.Since(began) < 60*time.Second {
		g, _ := c.GetSandbox(ctx(t), sbx.ID)
		o, _ := c.GetSandbox(ctx(t), other.ID)
		t.Logf("%s: busy=%s other=%s", time.Since(began).Round(time.Millisecond), g.State, o.State)
		if g.State != "running" && o.State != "running" {
			break
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("exec returned: %v", <-done)
	_ = client.ErrNotFound
}
