package guest

import (
	"io"
	"net"
	"testing"
	"time"
)

// FuzzHostSync: whatever the guest's side of the port sends around (or
// instead of) its echo, HostSync succeeds exactly when the echo of the
// token it sent is there, and never panics.
func FuzzHostSync(f *testing.F) {
	f.Add([]byte{}, []byte{}, true)
	f.Add([]byte("PRI * HTTP/2.0"), []byte{0, 0, 0}, true)
	f.Add([]byte(syncMagic), []byte(syncMagic), false)
	f.Fuzz(func(t *testing.T, before, after []byte, echo bool) {
		host, guestEnd := net.Pipe()
		defer host.Close()
		go func() {
			defer guestEnd.Close()
			token := make([]byte, SyncTokenLen)
			if _, err := io.ReadFull(guestEnd, token); err != nil {
				return
			}
			msg := append([]byte{}, before...)
			if echo {
				msg = append(msg, token...)
			}
			msg = append(msg, after...)
			guestEnd.Write(msg)
		}()
		err := HostSync(host, time.Now().Add(5*time.Second), SyncOptions{})
		if echo && err != nil {
			t.Fatalf("the echo was sent and HostSync failed: %v", err)
		}
		if !echo && err == nil {
			t.Fatal("HostSync succeeded without the echo")
		}
	})
}
