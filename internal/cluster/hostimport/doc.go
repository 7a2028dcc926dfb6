// Package hostimport moves a single host's state directory into a
// cluster's PostgreSQL (`airlock cluster import`): its tenants and API
// keys (the hashes, as stored: every key goes on working against the API
// tier), its ended sandbox records, and its audit chain, which becomes
// that host's node chain in the cluster, verified on the host before and
// in PostgreSQL after. Sandboxes still running on the host are not
// imported, nor are its templates: a node reports the templates it holds
// when it registers, so the host's come with it when it joins.
//
// The directory must not be in use: the daemon's lock on it is taken for
// the whole import, so a running daemon is refused and none can start
// meanwhile. A chain that fails verification on the host is refused
// before anything is written. Every step is idempotent: importing the
// same directory again adds nothing, and a chain grown since the last
// import ships only its new records.
//
// The host keeps its identity as a node: the directory's node identity
// (internal/cluster/nodeagent) names the imported chain, so when the host
// later joins the cluster as that node it ships the same chain on from
// where the import left it.
package hostimport
