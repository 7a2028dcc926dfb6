// Package placement chooses the node that runs a new sandbox. A Placer
// holds this replica's view of the nodes (as the nodes last reported
// themselves), the creates it dispatched that no heartbeat reflects yet,
// and the nodes it failed to reach lately; Place runs the whole loop for
// one create: choose, dispatch through the caller's function, and on a
// refusal or a failure choose again.
//
// One decision:
//
//  1. Filter, counting every rejection by reason (Reason): the node is not
//     ready, or its lease ends within one heartbeat (LeaseMargin); it
//     refused or failed this request already; this replica failed to reach
//     it (no answer, ErrNoAnswer) in the last UnreachableFor (30 s, a
//     circuit breaker that never leaves this replica; a node that answers
//     "unavailable" is reachable and is not benched); its host class differs or it does not have the
//     build ready; it lacks a capability (net, proxy) or a label; it has no
//     headroom in slots, memory or vCPUs.
//  2. Sample uniformly without replacement until K (3) nodes pass the
//     filter or every node was looked at. Sampling, not scanning, keeps a
//     decision to a few microseconds at 1,000 nodes and spreads concurrent
//     decisions of several replicas instead of sending them all to the one
//     best node.
//  3. Score, lowest wins:
//     load = max((slots_used+inflight+1)/cap_slots,
//     (mem_reserved+req_mem)/(cap_mem*Rm), (vcpus_reserved+req_vcpus)/(cap_vcpus*Rc))
//     score = load + 0.5*cpu_usage - 0.3*[warm clone of the build ready]
//     - 0.1*[build ready locally], with Rm = 1.5 and Rc = 4 by default:
//     a clone maps its template's memory privately and costs only the
//     pages it dirties, and guests rarely keep their vCPUs busy. The warm
//     clone counts as ready only while the node's reported warm clones of
//     the build outnumber this replica's creates of it since that report.
//
// The loop: a node's refusal (ResourceExhausted: it made nothing) is final
// for that node and the next candidate is tried for the same sandbox id;
// refusals are not attempts, though more than MaxRefusals of them end the
// create as ResourceExhausted. Any other error, or a timeout, excludes the
// node and counts as a hard attempt: the node may have made something, so
// the caller uses a new sandbox id (Attempt.N) and leaves the first to the
// orphan rule. After MaxAttempts (3) hard attempts, or when the context
// ends, Place gives up. Every create is added to the node's in-flight
// count when it is dispatched and removed when it fails, when a heartbeat
// reported after it finished covers it, or after InflightHeartbeats (2)
// heartbeats in any case.
//
// Failing, Place returns *Error, which carries an errdefs class:
// ResourceExhausted (every node full, or only refusals; HTTP 429, nothing
// was made), FailedPrecondition (no node in any state has the build, a
// needed capability or the labels; 409), Unavailable (every attempt failed
// to reach its node; 503), DeadlineExceeded (504), or the last node's
// class after MaxAttempts hard failures. Its message counts nodes by
// reason and never names a node: tenants read it. Node ids are in its
// fields, for the operator's logs.
//
// It never touches SQL, HTTP or the wall clock: the caller feeds it node
// views, calls the nodes in its Dispatch function, and gives it a
// clock.Clock and a seeded *rand.Rand, so the API tier and the simulation
// run the same code and the simulation is deterministic. It never blocks
// on anything but its own short lock, and a decision allocates nothing.
package placement
