// Package templatesync is the node side of templates across a cluster:
// a Syncer (in each node agent) pulls the current builds of its node's
// host class from a blob store (internal/cluster/blobs) into the node's
// template registry. Builds are published by internal/cluster/templatepub;
// the node holds no database credentials and learns of them from the API
// tier.
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
