package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestValidateTenant(t *testing.T) {
	for _, tc := range []struct {
		tenant string
		ok     bool
	}{
		{"a", true},
		{"firm-a", true},
		{"0day_llp", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"Firm", false},
		{"-firm", false},
		{"_firm", false},
		{"firm a", false},
		{"firm/a", false},
		{"firm.a", false},
		{"ﬁrm", false},
	} {
		err := ValidateTenant(tc.tenant)
		if tc.ok && err != nil {
			t.Errorf("ValidateTenant(%q) = %v, want nil", tc.tenant, err)
		}
		if !tc.ok && !errdefs.IsInvalidArgument(err) {
			t.Errorf("ValidateTenant(%q) = %v, want InvalidArgument", tc.tenant, err)
		}
	}
}

func TestCreateKeyValidation(t *testing.T) {
	s, _ := newTestStore(t)
	for _, tc := range []struct{ tenant, name string }{
		{"", "ci"},
		{"Firm", "ci"},
		{"firm", ""},
		{"firm", strings.Repeat("x", 129)},
		{"firm", "bad\nname"},
	} {
		if _, _, err := s.CreateKey(ctx, tc.tenant, tc.name); !errdefs.IsInvalidArgument(err) {
			t.Errorf("CreateKey(%q, %q) = %v, want InvalidArgument", tc.tenant, tc.name, err)
		}
	}
	if _, err := s.ListKeys(ctx, "Bad Tenant"); !errdefs.IsInvalidArgument(err) {
		t.Errorf("ListKeys(bad tenant) = %v, want InvalidArgument", err)
	}
}

func TestKeyLifecycle(t *testing.T) {
	s, path := newTestStore(t)
	clock := useClock(s, t0)

	plain, k, err := s.CreateKey(ctx, "firm-a", "ci")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(plain, "alk_") || len(plain) != 4+52 {
		t.Errorf("key %q: want alk_ + 52 base32 characters", plain[:8])
	}
	if k.Prefix != plain[:8] || k.Tenant != "firm-a" || k.Name != "ci" || k.ID == "" || !k.CreatedAt.Equal(t0) || k.Revoked() {
		t.Errorf("key record = %+v", k)
	}

	// Only the hash is stored: the key appears nowhere in the database
	// files (main file and WAL).
	files, _ := filepath.Glob(path + "*")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(plain)) || bytes.Contains(b, []byte(plain[8:])) {
			t.Errorf("%s contains the plaintext key", filepath.Base(f))
		}
	}

	got, err := s.AuthenticateKey(ctx, plain)
	if err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if got != k {
		t.Errorf("authenticated key = %+v, want %+v", got, k)
	}

	plainB, kb, err := s.CreateKey(ctx, "firm-b", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if plainB == plain || kb.ID == k.ID {
		t.Fatal("two keys are equal")
	}

	for _, bad := range []string{"", "alk_", "nope", plain + "x", strings.ToUpper(plain), plain[:len(plain)-1]} {
		if _, err := s.AuthenticateKey(ctx, bad); !is(err, errdefs.ErrPermissionDenied) {
			t.Errorf("authenticate(%.10q...) = %v, want PermissionDenied", bad, err)
		}
	}

	// Listing.
	for _, tc := range []struct {
		tenant string
		want   []string
	}{
		{"", []string{k.ID, kb.ID}},
		{"firm-a", []string{k.ID}},
		{"firm-b", []string{kb.ID}},
		{"firm-c", nil},
	} {
		keys, err := s.ListKeys(ctx, tc.tenant)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, k := range keys {
			ids = append(ids, k.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ListKeys(%q) = %v, want %v", tc.tenant, ids, tc.want)
		}
	}

	// Revocation is permanent and keeps its first time.
	clock.Set(t0.Add(time.Hour))
	if err := s.RevokeKey(ctx, k.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthenticateKey(ctx, plain); !is(err, errdefs.ErrPermissionDenied) {
		t.Errorf("authenticate revoked key = %v, want PermissionDenied", err)
	}
	if _, err := s.AuthenticateKey(ctx, plainB); err != nil {
		t.Errorf("revoking one key broke another: %v", err)
	}
	clock.Set(t0.Add(2 * time.Hour))
	if err := s.RevokeKey(ctx, k.ID); err != nil {
		t.Errorf("second revoke = %v, want nil", err)
	}
	keys, _ := s.ListKeys(ctx, "firm-a")
	if len(keys) != 1 || keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(t0.Add(time.Hour)) {
		t.Errorf("revoked key = %+v, want RevokedAt = first revocation", keys)
	}

	if err := s.RevokeKey(ctx, "00000000-0000-0000-0000-000000000000"); !errdefs.IsNotFound(err) {
		t.Errorf("revoke unknown = %v, want NotFound", err)
	}
	if err := s.RevokeKey(ctx, "../x"); !errdefs.IsInvalidArgument(err) {
		t.Errorf("revoke malformed id = %v, want InvalidArgument", err)
	}
}

// StoredKeys gives every key, revoked ones too, with the hash its
// plaintext authenticates by.
func TestStoredKeys(t *testing.T) {
	s, _ := newTestStore(t)
	a, ka, err := s.CreateKey(ctx, "acme", "one")
	if err != nil {
		t.Fatal(err)
	}
	b, kb, err := s.CreateKey(ctx, "beta", "two")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeKey(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	got, err := s.StoredKeys(ctx)
	if err != nil || len(got) != 2 {
		t.Fatalf("StoredKeys: %+v, %v", got, err)
	}
	if got[0].ID != ka.ID || got[0].Hash != HashKey(a) || got[0].RevokedAt != nil {
		t.Errorf("first: %+v", got[0])
	}
	if got[1].ID != kb.ID || got[1].Hash != HashKey(b) || got[1].RevokedAt == nil || got[1].Tenant != "beta" {
		t.Errorf("second: %+v", got[1])
	}
}
