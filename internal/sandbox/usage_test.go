package sandbox_test

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/sandbox"
	"github.com/airlock-dev/airlock/internal/store"
)

// Get of a running sandbox carries its VMM's host usage; lists and ended
// sandboxes do not; /metrics sums it by template and, only when asked,
// per sandbox.
func TestLifecycleUsage(t *testing.T) {
	for _, perSandbox := range []bool{false, true} {
		e := newLCEnv(t)
		mx := metrics.New()
		m := e.manager(t, sandbox.Config{Metrics: mx, MetricsPerSandbox: perSandbox})
		ctx := context.Background()
		a, b := lcCreate(t, m, sandbox.CreateRequest{}), lcCreate(t, m, sandbox.CreateRequest{})

		got, err := m.Get(ctx, lcTenant, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		u := got.Usage
		if u == nil {
			t.Fatal("Get of a running sandbox has no usage")
		}
		if u.MemoryRSSBytes <= 0 || u.MemoryPSSBytes <= 0 || u.MemoryPSSBytes > u.MemoryRSSBytes ||
			u.MemoryPrivateBytes > u.MemoryRSSBytes || u.CPUSeconds < 0 || time.Since(u.MeasuredAt) > time.Minute {
			t.Fatalf("usage %+v: want 0 < PSS <= RSS, private <= RSS, a fresh reading", u)
		}
		list, err := m.List(ctx, sandbox.ListFilter{Tenant: lcTenant})
		if err != nil || len(list) != 2 || list[0].Usage != nil {
			t.Fatalf("list: %v, %+v (want two entries without usage)", err, list)
		}

		families := gather(t, mx)
		pss := families["airlock_sandboxes_memory_pss_bytes"]
		if pss == nil || len(pss.Metric) != 1 || label(pss.Metric[0], "template") != "base" || pss.Metric[0].Gauge.GetValue() < float64(u.MemoryPSSBytes) {
			t.Fatalf("sandboxes_memory_pss_bytes: %v (one sandbox alone has %d)", pss, u.MemoryPSSBytes)
		}
		sbx := families["airlock_sandbox_memory_pss_bytes"]
		switch {
		case !perSandbox && sbx != nil:
			t.Fatalf("per-sandbox series without MetricsPerSandbox: %v", sbx)
		case perSandbox && (sbx == nil || len(sbx.Metric) != 2):
			t.Fatalf("per-sandbox series: %v, want one per sandbox", sbx)
		}
		for _, f := range families {
			for _, mt := range f.Metric {
				if label(mt, "tenant") != "" {
					t.Fatalf("%s names a tenant", f.GetName())
				}
			}
		}

		if err := m.Kill(ctx, lcTenant, a.ID); err != nil {
			t.Fatal(err)
		}
		if ended, err := m.Get(ctx, lcTenant, a.ID); err != nil || ended.State != store.StateKilled || ended.Usage != nil {
			t.Fatalf("killed sandbox: %v, %+v (want killed, no usage)", err, ended)
		}
		if perSandbox {
			if sbx := gather(t, mx)["airlock_sandbox_memory_pss_bytes"]; sbx == nil || len(sbx.Metric) != 1 || label(sbx.Metric[0], "sandbox") != b.ID {
				t.Fatalf("after a kill, per-sandbox series: %v, want only %s", sbx, b.ID)
			}
		}
	}
}

func gather(t *testing.T, mx *metrics.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := mx.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
