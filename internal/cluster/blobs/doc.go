// Package blobs stores template blobs (a bake's memory file, device state
// and root image) by content: each is named sha256/<hex> of its bytes, so
// a blob present once is never uploaded again and a blob shared by two
// builds is stored once.
//
// A Store has three calls, Stat, Get and Put. Two kinds are built in,
// chosen by URL (Open):
//
//   - file:///DIR: a directory, shared between hosts (NFS) or local in
//     tests. Put writes a temporary file, checks its digest, fsyncs and
//     renames it into place, so a reader never sees a partial blob.
//   - http://HOST/PREFIX and https://...: plain GET, HEAD and PUT of
//     PREFIX/sha256/<hex>, as served by Handler (`airlock blobs serve`)
//     or by any server that answers those verbs. A PUT carries the
//     store's token as a bearer token; the server refuses a PUT without
//     it and one whose body does not hash to its name.
//
// Get does not verify: the reader hashes while it streams (the node's
// template syncer does) and refuses what does not match the digest it
// was given. Digests come from the build's record in PostgreSQL, the
// root of trust for template content.
package blobs
