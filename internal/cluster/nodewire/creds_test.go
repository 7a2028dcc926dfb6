package nodewire

import (
	"strings"
	"testing"
	"time"
)

// An assertion verifies only on its node, under its epoch, before it
// expires, with its own MAC; every mutation is refused.
func TestAssertion(t *testing.T) {
	master := []byte("master-secret-of-the-tier-000000")
	now := time.Unix(1_800_000_000, 0)
	key := AssertKey(master, "n1", 3)
	a := Assert(key, "n1", 3, "acme", now.Add(AssertionTTL))
	if tenant, err := Verify(key, "n1", 3, a, now); err != nil || tenant != "acme" {
		t.Fatalf("valid assertion: %q, %v", tenant, err)
	}
	bad := map[string]func() error{
		"other node": func() error { _, err := Verify(AssertKey(master, "n2", 3), "n2", 3, a, now); return err },
		"old epoch":  func() error { _, err := Verify(AssertKey(master, "n1", 4), "n1", 4, a, now); return err },
		"expired":    func() error { _, err := Verify(key, "n1", 3, a, now.Add(AssertionTTL)); return err },
		"too long": func() error {
			_, err := Verify(key, "n1", 3, Assert(key, "n1", 3, "acme", now.Add(time.Hour)), now)
			return err
		},
		"tenant swapped": func() error {
			_, err := Verify(key, "n1", 3, strings.Replace(a, ".acme.", ".globex.", 1), now)
			return err
		},
		"node's own key for another node": func() error {
			forged := Assert(key, "n2", 3, "acme", now.Add(time.Minute))
			_, err := Verify(AssertKey(master, "n2", 3), "n2", 3, forged, now)
			return err
		},
		"a tenant key": func() error { _, err := Verify(key, "n1", 3, "alk_0123456789abcdef", now); return err },
	}
	for name, f := range bad {
		if err := f(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if !CheckSession(master, "n1", 3, SessionToken(master, "n1", 3)) || CheckSession(master, "n1", 4, SessionToken(master, "n1", 3)) {
		t.Error("session tokens are not bound to their epoch")
	}
}
