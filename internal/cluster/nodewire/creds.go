package nodewire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// MaxAssertionTTL is the longest an assertion may be valid for; the tier
// makes them valid for AssertionTTL. A node refuses one expiring further
// ahead (a clock far off, or a forgery attempt with a long life).
const (
	AssertionTTL    = 60 * time.Second
	MaxAssertionTTL = 2 * time.Minute
)

// derive is HMAC-SHA256(master, purpose|node|epoch).
func derive(master []byte, purpose, node string, epoch int64) []byte {
	m := hmac.New(sha256.New, master)
	fmt.Fprintf(m, "airlock-cluster-v1|%s|%s|%d", purpose, node, epoch)
	return m.Sum(nil)
}

// AssertKey is node's assertion key under epoch (tier side).
func AssertKey(master []byte, node string, epoch int64) []byte {
	return derive(master, "assert", node, epoch)
}

// SessionToken is node's session token under epoch (tier side).
func SessionToken(master []byte, node string, epoch int64) string {
	return base64.RawURLEncoding.EncodeToString(derive(master, "session", node, epoch))
}

// CheckSession reports whether token is node's session token under epoch,
// in constant time.
func CheckSession(master []byte, node string, epoch int64, token string) bool {
	return hmac.Equal([]byte(SessionToken(master, node, epoch)), []byte(token))
}

// Assert makes the assertion the tier sends with a call to node (under
// epoch) for tenant, valid until exp.
func Assert(key []byte, node string, epoch int64, tenant string, exp time.Time) string {
	body := fmt.Sprintf("v1.%s.%d.%s.%d", node, epoch, tenant, exp.UnixMilli())
	return body + "." + mac(key, body)
}

func mac(key []byte, body string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Verify checks an assertion on node under epoch at now with the node's
// key and returns its tenant. Every failure is PermissionDenied and says
// no more than which check failed.
func Verify(key []byte, node string, epoch int64, token string, now time.Time) (string, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 6 || parts[0] != "v1" {
		return "", errdefs.PermissionDenied("not a cluster assertion")
	}
	body := strings.Join(parts[:5], ".")
	if !hmac.Equal([]byte(mac(key, body)), []byte(parts[5])) {
		return "", errdefs.PermissionDenied("assertion signature does not verify")
	}
	ep, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || parts[1] != node || ep != epoch {
		return "", errdefs.PermissionDenied("assertion is for another node or epoch")
	}
	expMS, err := strconv.ParseInt(parts[4], 10, 64)
	if err != nil {
		return "", errdefs.PermissionDenied("assertion expiry unreadable")
	}
	exp := time.UnixMilli(expMS)
	if !now.Before(exp) || exp.Sub(now) > MaxAssertionTTL {
		return "", errdefs.PermissionDenied("assertion expired or too long-lived")
	}
	if err := store.ValidateTenant(parts[3]); err != nil {
		return "", errdefs.PermissionDenied("assertion tenant invalid")
	}
	return parts[3], nil
}
