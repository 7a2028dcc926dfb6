package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The audit anchor: the chain's head written, after every append, to a
// file outside the database (airlock.db.audit-anchor). The head row inside
// the database catches a deleted tail only from someone who cannot also
// rewrite that row; the anchor catches whoever can rewrite the database
// but not the anchor. Where the filesystem supports it the anchor is made
// append-only (chattr +a): truncating it then needs CAP_LINUX_IMMUTABLE
// too, not just write access. Someone with both can still cut the log and
// the anchor together: copy LastHash elsewhere (another host) for that.

// anchorSuffix names the anchor beside the database file.
const anchorSuffix = ".audit-anchor"

// anchor appends "seq hash" lines; safe for concurrent use. An append to
// the log holds the anchor locked (this process's mutex, then a flock on
// the file for the others) from before its transaction until its line is
// written, so lines are in seq order whatever the number of writers, and
// a line is written only for a record that committed.
type anchor struct {
	path string
	mu   sync.Mutex // held by the append in progress in this process
	f    *os.File   // guarded by mu; opened O_APPEND
	// appendOnly is whether the file carries the append-only flag.
	appendOnly bool
	// last is the newest entry in the file as this process knows it: read
	// at open, then each record written; guarded by mu. Other processes
	// on the same store append too, so the file may be ahead of it.
	last anchorEntry
	// broken is why the file cannot be trusted (a line out of order or
	// malformed), nil when it read clean at open; immutable.
	broken error
}

func openAnchor(dbPath string) (*anchor, error) {
	path := dbPath + anchorSuffix
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit anchor: %w", err)
	}
	// Owner-only, like the database (an append-only anchor cannot be
	// chmod'ed, so only one that needs it is).
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("audit anchor: %w", err)
		}
	}
	seq, hash, rerr := readAnchor(path)
	return &anchor{path: path, f: f, appendOnly: isAppendOnly(f), last: anchorEntry{seq, hash}, broken: rerr}, nil
}

// newest is the anchor's newest entry this process knows; the anchor is
// locked.
func (a *anchor) newest() anchorEntry { return a.last }

// lock holds the anchor for one append (see anchor); unlock releases it.
func (a *anchor) lock() (unlock func(), err error) {
	a.mu.Lock()
	release, err := lockFile(a.f)
	if err != nil {
		a.mu.Unlock()
		return nil, fmt.Errorf("audit anchor: lock: %w", err)
	}
	return func() { release(); a.mu.Unlock() }, nil
}

// seal makes the anchor append-only where the filesystem allows it.
func (a *anchor) seal() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.appendOnly = setAppendOnly(a.f)
	return a.appendOnly
}

// empty reports whether nothing was ever anchored.
func (a *anchor) empty() bool {
	fi, err := os.Stat(a.path)
	return err == nil && fi.Size() == 0
}

// record writes the head after an append, with the anchor locked. A
// crash between the database's commit and this write leaves the anchor
// behind the head, which verify accepts; it never leaves it ahead.
func (a *anchor) record(seq int64, hash string) error {
	_, err := fmt.Fprintf(a.f, "%d %s\n", seq, hash)
	if err == nil && seq > a.last.seq {
		a.last = anchorEntry{seq, hash}
	}
	return err
}

func (a *anchor) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}

// anchorEntry is one line of the anchor: a record's seq and hash.
type anchorEntry struct {
	seq  int64
	hash string
}

// anchorCursor reads the anchor's lines in order. Seqs only ever grow in
// a true anchor (one line per append, after its commit; a crash can lose
// the last line, never reorder), so a seq that does not grow means the
// log was cut and written again: the anchor's older line is the truth.
type anchorCursor struct {
	path string
	f    *os.File // nil for a missing anchor
	r    *bufio.Reader
	n    int         // lines read
	prev anchorEntry // the line before cur
	cur  anchorEntry
	ok   bool  // cur holds a line
	err  error // a malformed or out-of-order line; sticky
}

// openAnchorCursor reads the anchor at path; limit >= 0 reads only its
// first limit bytes (what it held at some earlier moment).
func openAnchorCursor(path string, limit int64) (*anchorCursor, error) {
	c := &anchorCursor{path: path}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	var r io.Reader = f
	if limit >= 0 {
		r = io.LimitReader(f, limit)
	}
	c.f, c.r = f, bufio.NewReader(r)
	c.next()
	return c, nil
}

// anchorSize is the anchor's length now (0 if it is missing).
func anchorSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func (c *anchorCursor) close() {
	if c.f != nil {
		c.f.Close()
	}
}

// next moves to the following line; ok is false at the end or on error.
func (c *anchorCursor) next() {
	c.prev, c.ok = c.cur, false
	if c.r == nil || c.err != nil {
		return
	}
	line, err := c.r.ReadString('\n')
	if err == io.EOF {
		// A last line without its newline is a write in progress (a line
		// that crosses a page boundary can be seen half written) or cut
		// short by a crash: not anchored yet, like a crash just before
		// the write.
		return
	}
	if err != nil {
		c.err = err
		return
	}
	c.n++
	s, h, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
	v, perr := strconv.ParseInt(s, 10, 64)
	switch {
	case !ok || perr != nil || v <= 0 || len(h) != 64:
		c.err = fmt.Errorf("%s line %d is malformed", c.path, c.n)
	case v <= c.prev.seq:
		c.err = fmt.Errorf("%s line %d records record %d again after record %d: the log was cut back and written again", c.path, c.n, v, c.prev.seq)
	default:
		c.cur, c.ok = anchorEntry{v, h}, true
	}
}

// readAnchor returns the anchor's last entry (0, "" for a missing or
// empty anchor), checking every line on the way.
func readAnchor(path string) (seq int64, hash string, err error) {
	c, err := openAnchorCursor(path, -1)
	if err != nil {
		return 0, "", err
	}
	defer c.close()
	for c.ok {
		c.next()
	}
	return c.prev.seq, c.prev.hash, c.err
}
