// Package template owns template specs and their root filesystems: it
// parses and validates spec files (templates/*.yaml), flattens `from`
// inheritance, hashes a spec together with the content of every file it
// copies, and builds the spec's read-only ext4 root image with mmdebstrap,
// cached by that hash.
//
// It never runs anything a spec asks for on the host: `build` and `warmup`
// commands run only inside the template's VM during the bake. It never
// installs anything into the host's own system, and it never leaves a
// half-built image in the cache (work happens in a temporary directory that
// is removed on failure; finished images are published by rename).
package template
