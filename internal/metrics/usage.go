package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// SandboxUsage is one running sandbox's host usage, as the sandbox manager
// reads it at scrape time.
type SandboxUsage struct {
	ID, Template                     string
	CPUSeconds                       float64
	PSSBytes, RSSBytes, PrivateBytes int64
}

// usageCollector reads running sandboxes at every scrape. By template it
// always reports (template names are the operator's own closed set); one
// series per sandbox only when the operator asked for them, since /metrics
// answers without a key and sandbox ids are then visible to anyone who can
// reach it.
type usageCollector struct {
	src        func() []SandboxUsage // immutable
	perSandbox bool                  // immutable

	cpu, pss, private                  *prometheus.Desc
	sbxCPU, sbxPSS, sbxRSS, sbxPrivate *prometheus.Desc
}

func newUsageCollector(src func() []SandboxUsage, perSandbox bool) *usageCollector {
	byTmpl, bySbx := []string{"template"}, []string{"sandbox", "template"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc("airlock_"+name, help, labels, nil)
	}
	return &usageCollector{src: src, perSandbox: perSandbox,
		cpu:        d("sandboxes_cpu_seconds", "CPU time used so far by the VMMs of the running sandboxes of a template.", byTmpl),
		pss:        d("sandboxes_memory_pss_bytes", "Proportional set size of the running sandboxes of a template (shared template pages divided among their sharers).", byTmpl),
		private:    d("sandboxes_memory_private_bytes", "Memory only the running sandboxes of a template hold: what killing them gives back.", byTmpl),
		sbxCPU:     d("sandbox_cpu_seconds_total", "CPU time one running sandbox's VMM has used (with --metrics-per-sandbox).", bySbx),
		sbxPSS:     d("sandbox_memory_pss_bytes", "Proportional set size of one running sandbox (with --metrics-per-sandbox).", bySbx),
		sbxRSS:     d("sandbox_memory_rss_bytes", "Resident set size of one running sandbox (with --metrics-per-sandbox).", bySbx),
		sbxPrivate: d("sandbox_memory_private_bytes", "Memory only one running sandbox holds (with --metrics-per-sandbox).", bySbx),
	}
}

func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.cpu, c.pss, c.private} {
		ch <- d
	}
	if c.perSandbox {
		for _, d := range []*prometheus.Desc{c.sbxCPU, c.sbxPSS, c.sbxRSS, c.sbxPrivate} {
			ch <- d
		}
	}
}

func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	type sums struct {
		cpu          float64
		pss, private int64
	}
	byTmpl := map[string]*sums{}
	for _, u := range c.src() {
		s := byTmpl[u.Template]
		if s == nil {
			s = &sums{}
			byTmpl[u.Template] = s
		}
		s.cpu += u.CPUSeconds
		s.pss += u.PSSBytes
		s.private += u.PrivateBytes
		if c.perSandbox {
			ch <- prometheus.MustNewConstMetric(c.sbxCPU, prometheus.CounterValue, u.CPUSeconds, u.ID, u.Template)
			ch <- prometheus.MustNewConstMetric(c.sbxPSS, prometheus.GaugeValue, float64(u.PSSBytes), u.ID, u.Template)
			ch <- prometheus.MustNewConstMetric(c.sbxRSS, prometheus.GaugeValue, float64(u.RSSBytes), u.ID, u.Template)
			ch <- prometheus.MustNewConstMetric(c.sbxPrivate, prometheus.GaugeValue, float64(u.PrivateBytes), u.ID, u.Template)
		}
	}
	for tmpl, s := range byTmpl {
		ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.GaugeValue, s.cpu, tmpl)
		ch <- prometheus.MustNewConstMetric(c.pss, prometheus.GaugeValue, float64(s.pss), tmpl)
		ch <- prometheus.MustNewConstMetric(c.private, prometheus.GaugeValue, float64(s.private), tmpl)
	}
}

// WatchSandboxUsage makes every scrape read src: the host CPU and memory
// of running sandboxes, summed by template and, with perSandbox, one
// series per sandbox. Call it at most once per Metrics; later calls are
// ignored.
func (m *Metrics) WatchSandboxUsage(src func() []SandboxUsage, perSandbox bool) {
	if m == nil {
		return
	}
	m.usageMu.Lock()
	defer m.usageMu.Unlock()
	if m.usageWatched {
		return
	}
	m.usageWatched = true
	m.reg.MustRegister(newUsageCollector(src, perSandbox))
}
