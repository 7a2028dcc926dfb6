package sandbox

import (
	"time"

	"github.com/airlock-dev/airlock/internal/metrics"
	"github.com/airlock-dev/airlock/internal/procstat"
)

// Usage is what a running sandbox costs the host right now: the figures
// of its VMM process (QEMU, with the guest's RAM inside it).
type Usage struct {
	// CPUSeconds is the CPU time its VMM has used since it started
	// (restore, guest and every call into it).
	CPUSeconds float64 `json:"cpu_seconds"`
	// MemoryPSSBytes is its proportional share of host memory: pages
	// shared with other clones of the same template count divided among
	// them, so the PSS of all sandboxes adds up to what they use.
	MemoryPSSBytes int64 `json:"memory_pss_bytes"`
	// MemoryRSSBytes counts every resident page in full.
	MemoryRSSBytes int64 `json:"memory_rss_bytes"`
	// MemoryPrivateBytes is what only this sandbox holds: what killing it
	// gives back.
	MemoryPrivateBytes int64     `json:"memory_private_bytes"`
	MeasuredAt         time.Time `json:"measured_at"`
}

// usageOf reads m's VMM; nil once it has ended or cannot be read.
func usageOf(m Machine) *Usage {
	select {
	case <-m.Exited():
		return nil
	default:
	}
	u, err := procstat.Read(m.PID())
	if err != nil {
		return nil
	}
	return &Usage{CPUSeconds: u.CPU.Seconds(), MemoryPSSBytes: u.PSS, MemoryRSSBytes: u.RSS,
		MemoryPrivateBytes: u.Private, MeasuredAt: time.Now().UTC()}
}

// withUsage returns l's info with its usage, when its machine is attached
// and running.
func (l *live) withUsage() Info {
	info := l.infoCopy()
	select {
	case <-l.attached:
	default:
		return info // still re-attaching after a restart
	}
	if mach := l.current(); l.attachErr == nil && mach != nil && !l.ending.Load() {
		info.Usage = usageOf(mach)
	}
	return info
}

// metricsUsages reads every running sandbox of every tenant, for
// /metrics (the operator's; it names no tenant).
func (m *Manager) metricsUsages() []metrics.SandboxUsage {
	lives := m.all()
	out := make([]metrics.SandboxUsage, 0, len(lives))
	for _, l := range lives {
		info := l.withUsage()
		if u := info.Usage; u != nil {
			out = append(out, metrics.SandboxUsage{ID: info.ID, Template: info.Template, CPUSeconds: u.CPUSeconds,
				PSSBytes: u.MemoryPSSBytes, RSSBytes: u.MemoryRSSBytes, PrivateBytes: u.MemoryPrivateBytes})
		}
	}
	return out
}
