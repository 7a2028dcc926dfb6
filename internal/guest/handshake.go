package guest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"time"
)

// syncMagic starts every sync token. Its first byte is NUL, which can never
// start an HTTP/2 client preface ("PRI * HTTP/2.0"), so the agent can tell a
// sync from the start of a gRPC session by one byte.
const syncMagic = "\x00AIRLOCK"

// SyncTokenLen is the length of a sync token: magic plus an 8-byte nonce.
const SyncTokenLen = len(syncMagic) + 8

// HostSync sends a fresh sync token over conn and waits until the agent
// echoes it back, discarding anything read before it (stale echoes from an
// earlier, abandoned attempt). It returns once the agent is known to be
// reading the port and ready to start a gRPC session on it.
func HostSync(conn net.Conn, deadline time.Time) error {
	token := make([]byte, SyncTokenLen)
	copy(token, syncMagic)
	if _, err := rand.Read(token[len(syncMagic):]); err != nil {
		return fmt.Errorf("sync nonce: %w", err)
	}
	if err := conn.SetDeadline(deadline); err != nil {
		return fmt.Errorf("set sync deadline: %w", err)
	}
	defer conn.SetDeadline(time.Time{})
	if _, err := conn.Write(token); err != nil {
		return fmt.Errorf("send sync token: %w", err)
	}
	window := make([]byte, 0, 2*SyncTokenLen)
	buf := make([]byte, SyncTokenLen)
	for {
		n, err := conn.Read(buf)
		window = append(window, buf[:n]...)
		if bytes.Contains(window, token) {
			// The agent writes nothing after the echo until it sees our
			// HTTP/2 preface, so nothing past the token can be pending.
			return nil
		}
		if len(window) > SyncTokenLen {
			window = append(window[:0], window[len(window)-SyncTokenLen:]...)
		}
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("agent closed the port during sync: %w", err)
			}
			return fmt.Errorf("await sync echo: %w", err)
		}
	}
}

// IsSyncStart reports whether b, the first byte the agent read on a fresh
// port, starts a sync token rather than a gRPC session.
func IsSyncStart(b byte) bool { return b == syncMagic[0] }
