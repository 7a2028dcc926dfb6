// Package clock is the one seam between the cluster code and time: a
// Clock answers Now, Real reads the wall clock, and Manual is a virtual
// clock that moves only when told to, so tests and the placement
// simulation can step through minutes of leases and heartbeats in
// microseconds and get the same answers every run.
//
// It owns no timers, goroutines or scheduling: code that must wait for a
// time decides when to look again; a test advances a Manual clock and
// then checks for the state it expects, and never sleeps.
package clock
