// Package sim is a deterministic discrete-event simulation of placement
// across a fleet: it drives the real placement package and the real lease
// decisions (heartbeat renewal, sweep, amnesty, registration, the node's
// self-fencing) on a virtual clock, and measures what they do at load.
//
// The model. N nodes (default 1,000), each with S slots (default 16,384)
// and memory and vCPUs sized so that the template mix fills all three
// dimensions together: a node's memory is S x the mix's mean memory / Rm,
// its vCPUs S x the mix's mean vCPUs / Rc. Each node keeps a min-heap of
// its sandboxes' end times (one packed uint64 per sandbox, the only
// per-sandbox memory) and warm clones per template, each taken by a create
// and ready again after a refill time. A node heartbeats every 5 s,
// jittered, reporting its use; the API tier's replicas (3) each place
// with a real Placer that sees only those reports (pushed to every
// replica as soon as they land, as the database's change notification
// does), plus that replica's own in-flight creates. The node's true state
// is what decides a create: a node that is actually full refuses
// (resource_exhausted), as a real node's admission would; with one
// replica that never happens, since a placer's view only overstates use
// (ends are unseen until the next heartbeat) and its own creates are in
// flight, so it is the other replicas' creates that make refusals.
//
// Failures: nodes fail at a rate per node-hour (1%), half of them crashing
// (no heartbeat, every call refused, its sandboxes gone) and half
// freezing (no heartbeat, calls time out, sandboxes kept); both come back
// later. A node that comes back after its sweep is told so by its next
// heartbeat, fences and registers under a new epoch, exactly by the lease
// package's rules; one that comes back in time carries on.
//
// Workload: Poisson arrivals at a target load (a fraction of the fleet's
// capacity, by Little's law: rate x mean lifetime / (N x S)), 16 templates
// with Zipf popularity, lognormal lifetimes capped by a TTL. Each load
// level starts filled to its target, with the remaining lifetimes the
// steady state would have (a length-biased draw), and then runs one mean
// lifetime of arrivals.
//
// Every random choice comes from one seed per level, so the same seed
// gives the same numbers, except the wall-clock ones (decision time, wall
// time, RSS).
//
// It never reads the wall clock for anything but those measurements,
// never sleeps, and never runs concurrently with itself: one level is one
// goroutine's loop.
package sim
