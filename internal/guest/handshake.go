package guest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// syncMagic starts every sync token. Its first byte is NUL, which can never
// start an HTTP/2 client preface ("PRI * HTTP/2.0"), so the agent can tell a
// sync from the start of a gRPC session by one byte.
const syncMagic = "\x00AIRLOCK"

// SyncTokenLen is the length of a sync token: magic plus an 8-byte nonce.
const SyncTokenLen = len(syncMagic) + 8

// Resend schedule. A token can be lost: the agent discards what the host
// sent while it was closing a session (the guest's virtio-serial driver
// drops unread data when the port is closed), and an agent still inside an
// earlier host's HTTP/2 session reads the token as part of a frame. So the
// host sends a fresh token when no echo came back in time, doubling the
// wait up to resendMax.
const (
	resendFirst = 250 * time.Millisecond
	resendMax   = 2 * time.Second
)

// staleFlushLen is enough zero bytes to end any HTTP/2 session the agent may
// still be in: at most the rest of one frame header (9 bytes) plus the
// largest payload the agent's server accepts (16384, HTTP/2's default
// SETTINGS_MAX_FRAME_SIZE, which gRPC keeps), after which a header of zeros
// reads as a DATA frame on stream 0: a connection error, so the agent's
// server closes the session and the agent reopens the port in sync mode.
// It is a multiple of SyncTokenLen, so an agent already in sync mode reads
// the zeros as whole tokens (echoed and ignored by the host) and stays
// aligned for the real token that follows.
const staleFlushLen = (9 + 16384 + 9 + SyncTokenLen - 1) / SyncTokenLen * SyncTokenLen

// maxStaleFlushes bounds the flushes per sync, so a guest that is not
// reading at all (still booting) does not get a growing backlog to echo.
const maxStaleFlushes = 3

// SyncOptions tune HostSync.
type SyncOptions struct {
	// ResetStale is for a host that may find the agent still inside an
	// earlier host's gRPC session: a restarted daemon adopting a running
	// VM, or any redial after a dropped connection. The guest notices a
	// host disconnect only if it runs while the host end is closed; a new
	// host that connects first finds the old session alive, and that
	// session swallows the token. With ResetStale every resend is preceded
	// by a flush that ends such a session (see staleFlushLen). Not needed
	// right after a restore (the snapshot holds no session) or a cold boot.
	ResetStale bool
	// FirstResend, if set, is the wait before the first resend instead of
	// resendFirst, doubling from there. Resends sooner than resendFirst
	// carry the token alone, never a flush: a token is itself an HTTP/2
	// frame header too long for the agent's server (its length bytes are
	// "\x00AI", 16713 > 16384), so it ends a stale session sitting at a
	// frame boundary at once, and the quick resend reaches the agent once
	// it has reopened the port. For a host that has just dropped its own
	// session (Quiesce), where that is the only stale state possible.
	FirstResend time.Duration
}

// HostSync sends a sync token over conn and waits until the agent echoes
// it, resending a fresh token (after a flush, with ResetStale) whenever an
// echo is late, until deadline. Only the echo of the newest token counts:
// the port is a FIFO, so every echo of an older token and of the flush
// arrives before it, and nothing is left in flight once it is seen. The
// agent writes nothing after an echo until it sees the host's HTTP/2
// preface, so the connection is clean for gRPC when HostSync returns.
func HostSync(conn net.Conn, deadline time.Time, opts SyncOptions) error {
	if err := conn.SetWriteDeadline(deadline); err != nil {
		return fmt.Errorf("set sync deadline: %w", err)
	}
	defer conn.SetDeadline(time.Time{})
	s := syncer{conn: conn, opts: opts}
	if err := s.send(false); err != nil {
		return err
	}
	interval := resendFirst
	if opts.FirstResend > 0 {
		interval = opts.FirstResend
	}
	window := make([]byte, 0, 4*SyncTokenLen)
	buf := make([]byte, 4096)
	for {
		wake := time.Now().Add(interval)
		if deadline.Before(wake) {
			wake = deadline
		}
		if err := conn.SetReadDeadline(wake); err != nil {
			return fmt.Errorf("set sync deadline: %w", err)
		}
		n, err := conn.Read(buf)
		window = append(window, buf[:n]...)
		if bytes.Contains(window, s.token) {
			return nil
		}
		if len(window) > SyncTokenLen {
			window = append(window[:0], window[len(window)-SyncTokenLen+1:]...)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, os.ErrDeadlineExceeded) && time.Now().Before(deadline):
			if err := s.send(interval >= resendFirst); err != nil {
				return err
			}
			interval = min(2*interval, resendMax)
		case errors.Is(err, os.ErrDeadlineExceeded):
			return fmt.Errorf("no sync echo from the agent after %d tokens: %w", s.sent, err)
		case err == io.EOF:
			return fmt.Errorf("agent closed the port during sync: %w", err)
		default:
			return fmt.Errorf("await sync echo: %w", err)
		}
	}
}

// syncer is one HostSync's sending side.
type syncer struct {
	conn    net.Conn
	opts    SyncOptions
	token   []byte // the newest token sent; only its echo counts
	sent    int    // tokens sent
	flushes int    // stale-session flushes sent
}

// send writes a fresh token, preceded by a flush when flush is asked for
// (a resend after a full interval), with ResetStale, and the flush budget
// allows.
func (s *syncer) send(flush bool) error {
	token := make([]byte, SyncTokenLen)
	copy(token, syncMagic)
	if _, err := rand.Read(token[len(syncMagic):]); err != nil {
		return fmt.Errorf("sync nonce: %w", err)
	}
	msg := token
	if flush && s.opts.ResetStale && s.flushes < maxStaleFlushes {
		s.flushes++
		msg = append(make([]byte, staleFlushLen), token...)
	}
	if _, err := s.conn.Write(msg); err != nil {
		return fmt.Errorf("send sync token: %w", err)
	}
	s.token = token
	s.sent++
	return nil
}

// IsSyncStart reports whether b, the first byte the agent read on a fresh
// port, starts a sync token rather than a gRPC session.
func IsSyncStart(b byte) bool { return b == syncMagic[0] }
