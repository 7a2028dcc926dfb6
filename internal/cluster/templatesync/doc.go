// Package templatesync moves baked templates between the hosts of a
// cluster: Publish (the operator's `airlock template publish`) uploads a
// bake's blobs and records the build in PostgreSQL, and a Syncer (in each
// node agent) pulls the current builds of its node's host class into the
// node's template registry.
//
// Publish uploads the memory file, the device state and the root image
// to a blob store (internal/cluster/blobs; a blob already there is not
// sent again), and only then, in one transaction, inserts the build,
// makes it its template's current build and notifies the API tier: no
// row names a blob before the blob is complete.
//
// A Syncer is offered the current builds of its class with every
// heartbeat answer (the tier reads them again at every publish
// notification). For each build not held locally it downloads each blob
// into a temporary directory under the registry root, hashing while it
// streams, and refuses a blob whose digest is not the build's (state
// failed, with the blob named: never ready). It fsyncs, writes
// manifest.json last with the root image path rewritten to its own copy,
// publishes the directory by rename (template.Import) and reports the
// build ready; template.Registry.Open verifies the files again at first
// use, as for a local bake. At most MaxPulls pulls run at once. A pull
// that is cut off leaves only its temporary directory, which is removed
// (and which the next attempt removes first, should the process die).
package templatesync
