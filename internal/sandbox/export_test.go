package sandbox

import "time"

// WarmPoolState is template's warm pool: clones ready, and how many it
// keeps ready now (0, 0 without a pool).
func (m *Manager) WarmPoolState(template string) (ready, target int) {
	m.pools.mu.Lock()
	defer m.pools.mu.Unlock()
	for _, p := range m.pools.pools {
		if p.tmpl.Name == template {
			return len(p.ready), p.targetNow()
		}
	}
	return 0, 0
}

// SetGrowDecay shortens how long a grown pool waits before it shrinks;
// it returns the function that puts it back.
func SetGrowDecay(d time.Duration) (restore func()) {
	old := growDecay
	growDecay = d
	return func() { growDecay = old }
}

// FailurePause exposes the warm pool's pause after n failures in a row.
var FailurePause = failurePause
