// Package nodewire is what a cluster's API tier and its nodes say to each
// other, defined once for both sides: the node's calls to the tier's
// internal listener (register, heartbeat, ship), their JSON shapes and
// bounds, and the credentials on both directions.
//
// Credentials (v1, HMAC-SHA256 throughout; the keys never leave the API
// tier but as written here):
//
//   - Registration carries the cluster's join token (a shared secret
//     given to nodes and API processes as a file). It proves "a node of
//     this cluster", nothing more.
//   - The answer hands the node two keys derived from the tier's master
//     secret (kept in PostgreSQL, which nodes never reach) and bound to
//     the node id and the epoch it registered under: a session token,
//     which the node sends on every later call (the tier recomputes it, so
//     it keeps no session state), and an assertion key.
//   - Every call the tier makes to a node carries an assertion in
//     Authorization: v1.<node>.<epoch>.<tenant>.<expiry ms>.<mac>, the MAC
//     made with that node's assertion key. A node accepts only its own
//     id and current epoch, an expiry in the future and at most
//     MaxAssertionTTL ahead, and a matching MAC; it refuses anything else,
//     tenant API keys included. A node therefore cannot mint assertions
//     for another node (it holds only its own key), an old incarnation's
//     assertions die with its epoch, and tenant keys never reach a node.
//
// Decoding is strict where it protects: everything a node sends the tier
// is read with unknown fields refused, bounded in bytes (MaxBody) and in
// count (MaxRunning, MaxShipEnded, MaxShipAudit), and checked (ids,
// states) before it reaches the store.
//
// It imports the standard library and internal/store and
// internal/errdefs only; it does no I/O beyond the readers it is given.
package nodewire
