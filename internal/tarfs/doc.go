// Package tarfs moves directory trees in and out of a directory as tar
// streams: Extract unpacks a stream into a directory, Pack writes a
// directory (or one file) as a stream. It is the one implementation both
// ends use: the guest agent (unpacking uploads, packing downloads inside
// the sandbox) and the Go client (on the user's machine). The daemon in
// between relays the bytes and never imports this package.
//
// A stream is untrusted on both ends, so Extract is confined to its
// directory:
//
//   - names must be relative and clean of ".." (a leading "./" is
//     dropped); absolute names, ".." elements, NUL bytes and names over
//     MaxNameLen are refused;
//   - no entry is written through a symbolic link: an entry whose parent
//     path holds a symlink (from the stream or already on disk) is refused,
//     and a regular file, link or symlink replacing an existing
//     non-directory removes it first instead of writing through it;
//   - symlinks are created only when their target, read from the link's
//     own directory, stays inside the directory (absolute targets are
//     refused); hard links must name an earlier entry inside it;
//   - device nodes, FIFOs and other special entries are refused (the whole
//     extraction stops with invalid_argument; nothing is skipped silently);
//   - setuid and setgid bits are dropped; owners are not restored;
//   - Limits bound the total bytes written, the bytes of any one entry,
//     the number of entries and the length of names; a stream that passes
//     a limit ends the extraction with resource_exhausted before the
//     entry that passes it is written (a sparse "bomb" is judged by the
//     size it would take on disk, not by its bytes in the stream).
//
// Every path is also opened through an os.Root, so even a race with
// another writer cannot take a write outside the directory.
//
// Extraction is not atomic: the entries written before a refusal stay
// (but not a file cut short by a broken stream or a full disk).
// Regular files, directories and symlinks keep their permission bits and
// modification times (a symlink's own time is not set); directories'
// times are set last, after their contents are written.
//
// Pack never follows a symlink below the directory it packs: links are
// stored as links. Special files (FIFOs, sockets, devices) are skipped.
// MaxBytes bounds the stream; a tree that is clearly too big is refused
// before the first byte is written.
package tarfs
