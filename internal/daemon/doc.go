// Package daemon is the host's composition root: the one place that opens
// what running sandboxes on this host takes, in order, and closes it in
// reverse. Open takes the host (accelerator, kernel, VMM driver), locks
// the state and run directories (one owner each: two would adopt, expire
// and reap each other's sandboxes), opens the store and refuses a store
// whose audit log was tampered with, seals the audit anchor, sets up host
// networking (namespaces, nftables, the egress proxy's address) when asked,
// starts the sandbox manager and then the egress proxy. Every step
// registers its undo on one cleanup stack as it succeeds, so a failure
// halfway leaves nothing, and Close undoes it all.
//
// `airlock serve`, the document job commands run in-process and `airlock
// bench soak` all start here; none of them reaches into the store, the
// template registry, the VMM or the network pool on its own.
package daemon
