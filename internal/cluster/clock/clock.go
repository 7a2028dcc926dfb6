package clock

import (
	"sync"
	"time"
)

// Clock tells the time. Code that decides from time (leases, placement,
// circuit breakers) takes a Clock instead of calling time.Now, so that a
// test or a simulation can run it on virtual time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Manual is a virtual clock: Now returns the time it was last set or
// advanced to. It is safe for concurrent use. Its time never goes
// backwards: Set to an earlier time panics, because every caller of a
// Clock (lease arithmetic above all) assumes monotonic time.
type Manual struct {
	mu  sync.Mutex
	now time.Time // guarded by mu; only ever increases
}

// NewManual returns a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d (d < 0 panics) and returns the new
// time.
func (m *Manual) Advance(d time.Duration) time.Time {
	if d < 0 {
		panic("clock: Advance by a negative duration")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	return m.now
}

// Set moves the clock to t, which must not be before the current time.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.Before(m.now) {
		panic("clock: Set to a time before the current one")
	}
	m.now = t
}
