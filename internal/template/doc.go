// Package template owns template specs and their root filesystems: it
// finds spec files along a search path (whose last entry is the shipped
// templates/*.yaml, embedded in the binary), parses and validates them,
// flattens `from` inheritance, hashes a spec together with the content of
// every file it copies (and the id of its container image), and builds the
// spec's read-only ext4 root image with mmdebstrap or from a local
// container image's layers, cached by that hash.
//
// It never contacts a container registry or daemon: images are read from
// local archives and layouts, and their layers are written only through a
// confined root (no escapes, no device nodes, bounded sizes).
//
// It never runs anything a spec asks for on the host: `build` and `warmup`
// commands run only inside the template's VM during the bake. It never
// installs anything into the host's own system, and it never leaves a
// half-built image in the cache (work happens in a temporary directory that
// is removed on failure; finished images are published by rename).
package template
