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

// anchor appends "seq hash" lines; safe for concurrent use.
type anchor struct {
	path string
	mu   sync.Mutex // serialises writes from this process
	f    *os.File   // guarded by mu; opened O_APPEND
	// appendOnly is whether the file carries the append-only flag.
	appendOnly bool
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
	return &anchor{path: path, f: f, appendOnly: isAppendOnly(f)}, nil
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

// record writes the head after an append. A crash between the database's
// commit and this write leaves the anchor behind the head, which verify
// accepts; it never leaves it ahead.
func (a *anchor) record(seq int64, hash string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := fmt.Fprintf(a.f, "%d %s\n", seq, hash)
	return err
}

func (a *anchor) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}

// readAnchor returns the highest seq the anchor records and its hash (0, ""
// for a missing or empty anchor). Malformed lines are an error: nothing
// but this package writes the file. An unterminated last line is ignored.
func readAnchor(path string) (seq int64, hash string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			return seq, hash, nil
		}
		if err == io.EOF {
			// A last line without its newline is a write in progress (a
			// line that crosses a page boundary can be seen half written)
			// or cut short by a crash: not anchored yet, like a crash just
			// before the write.
			return seq, hash, nil
		}
		if err != nil {
			return 0, "", err
		}
		s, h, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		v, perr := strconv.ParseInt(s, 10, 64)
		if !ok || perr != nil || v <= 0 || len(h) != 64 {
			return 0, "", fmt.Errorf("%s line %d is malformed", path, n)
		}
		if v > seq {
			seq, hash = v, h
		}
	}
}
