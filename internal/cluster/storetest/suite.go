package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airlock-dev/airlock/internal/errdefs"
	"github.com/airlock-dev/airlock/internal/store"
)

// Store is the part of a state store the suite exercises.
type Store interface {
	CreateKey(ctx context.Context, tenant, name string) (string, store.Key, error)
	RevokeKey(ctx context.Context, id string) error
	AuthenticateKey(ctx context.Context, plaintext string) (store.Key, error)
	ListKeys(ctx context.Context, tenant string) ([]store.Key, error)
	QueryAudit(ctx context.Context, f store.AuditFilter) ([]store.AuditRecord, error)
	InvoiceSeen(ctx context.Context, tenant, vendor, number string) (bool, error)
	RecordInvoice(ctx context.Context, tenant, vendor, number string) error
}

// Subject is one fresh, empty store under test.
type Subject struct {
	Store Store
	// Append appends r to the audit log and makes it visible to
	// QueryAudit (a cluster numbers records after they commit).
	Append func(ctx context.Context, r store.AuditRecord) error
}

// Case is one behaviour.
type Case struct {
	Name string
	Run  func(t *testing.T, s Subject)
}

// Run runs every case, each on a new subject, and returns how many ran.
func Run(t *testing.T, newSubject func(t *testing.T) Subject) int {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) { c.Run(t, newSubject(t)) })
	}
	return len(Cases())
}

// Cases returns the suite.
func Cases() []Case {
	return slices.Concat(keyCases(), auditCases(), invoiceCases())
}

var ctx = context.Background()

func wantClass(t *testing.T, what string, err, class error) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("%s: got %v, want %v", what, err, class)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func keyCases() []Case {
	return []Case{
		{"keys/create_then_authenticate", keysCreateThenAuthenticate},
		{"keys/unknown_and_malformed_denied", keysUnknownAndMalformedDenied},
		{"keys/revoke", keysRevoke},
		{"keys/list_by_tenant_oldest_first", keysListByTenantOldestFirst},
		{"keys/create_refuses_bad_input", keysCreateRefusesBadInput},
	}
}

func keysCreateThenAuthenticate(t *testing.T, s Subject) {
	before := time.Now().Add(-time.Second)
	plain, k, err := s.Store.CreateKey(ctx, "acme", "ci")
	must(t, err)
	if len(plain) < 40 || plain[:4] != store.KeyPrefix || k.Prefix != plain[:8] {
		t.Fatalf("key %q prefix %q: want alk_ and its first 8 characters kept", plain[:8], k.Prefix)
	}
	if k.Tenant != "acme" || k.Name != "ci" || k.ID == "" || k.Revoked() || k.CreatedAt.Before(before) {
		t.Fatalf("record %+v", k)
	}
	got, err := s.Store.AuthenticateKey(ctx, plain)
	must(t, err)
	if got.ID != k.ID || got.Tenant != k.Tenant || got.Name != k.Name || got.Prefix != k.Prefix || !got.CreatedAt.Equal(k.CreatedAt) {
		t.Fatalf("authenticated %+v, created %+v", got, k)
	}
}

func keysUnknownAndMalformedDenied(t *testing.T, s Subject) {
	_, _, err := s.Store.CreateKey(ctx, "acme", "ci")
	must(t, err)
	for _, p := range []string{"", "alk_", "alk_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Bearer x", "alk_" + string(make([]byte, 200))} {
		_, err := s.Store.AuthenticateKey(ctx, p)
		wantClass(t, fmt.Sprintf("authenticate %.12q", p), err, errdefs.ErrPermissionDenied)
	}
}

func keysRevoke(t *testing.T, s Subject) {
	plain, k, err := s.Store.CreateKey(ctx, "acme", "ci")
	must(t, err)
	must(t, s.Store.RevokeKey(ctx, k.ID))
	_, err = s.Store.AuthenticateKey(ctx, plain)
	wantClass(t, "revoked key", err, errdefs.ErrPermissionDenied)
	keys, err := s.Store.ListKeys(ctx, "acme")
	must(t, err)
	if len(keys) != 1 || !keys[0].Revoked() {
		t.Fatalf("after revoke: %+v", keys)
	}
	first := *keys[0].RevokedAt
	time.Sleep(2 * time.Millisecond) // a second revocation must not move the time
	must(t, s.Store.RevokeKey(ctx, k.ID))
	keys, _ = s.Store.ListKeys(ctx, "acme")
	if !keys[0].RevokedAt.Equal(first) {
		t.Fatalf("revoked again: time moved from %v to %v", first, keys[0].RevokedAt)
	}
	wantClass(t, "revoke unknown", s.Store.RevokeKey(ctx, "00000000-0000-4000-8000-000000000000"), errdefs.ErrNotFound)
	wantClass(t, "revoke bad id", s.Store.RevokeKey(ctx, "../x"), errdefs.ErrInvalidArgument)
}

func keysListByTenantOldestFirst(t *testing.T, s Subject) {
	var want []string
	for i, tenant := range []string{"a", "b", "a", "a", "b"} {
		_, k, err := s.Store.CreateKey(ctx, tenant, fmt.Sprintf("k%d", i))
		must(t, err)
		if tenant == "a" {
			want = append(want, k.ID)
		}
	}
	keys, err := s.Store.ListKeys(ctx, "a")
	must(t, err)
	var got []string
	for _, k := range keys {
		got = append(got, k.ID)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tenant a's keys %v, want %v in creation order", got, want)
	}
	all, err := s.Store.ListKeys(ctx, "")
	must(t, err)
	if len(all) != 5 {
		t.Fatalf("every tenant's keys: %d, want 5", len(all))
	}
	none, err := s.Store.ListKeys(ctx, "c")
	must(t, err)
	if len(none) != 0 {
		t.Fatalf("a tenant without keys got %d", len(none))
	}
	_, err = s.Store.ListKeys(ctx, "Not A Tenant")
	wantClass(t, "invalid tenant", err, errdefs.ErrInvalidArgument)
}

func keysCreateRefusesBadInput(t *testing.T, s Subject) {
	_, _, err := s.Store.CreateKey(ctx, "UPPER", "ci")
	wantClass(t, "bad tenant", err, errdefs.ErrInvalidArgument)
	_, _, err = s.Store.CreateKey(ctx, "acme", "")
	wantClass(t, "empty name", err, errdefs.ErrInvalidArgument)
	_, _, err = s.Store.CreateKey(ctx, "acme", "a\nb")
	wantClass(t, "control character in name", err, errdefs.ErrInvalidArgument)
}

func invoiceCases() []Case {
	return []Case{
		{"invoices/seen_after_record", invoicesSeenAfterRecord},
		{"invoices/record_twice_is_a_no_op", invoicesRecordTwiceIsANoOp},
		{"invoices/scoped_by_tenant_vendor_number", invoicesScopedByTenantVendorNumber},
	}
}

func invoicesSeenAfterRecord(t *testing.T, s Subject) {
	seen, err := s.Store.InvoiceSeen(ctx, "acme", "vendor", "INV-1")
	must(t, err)
	if seen {
		t.Fatal("seen before recorded")
	}
	must(t, s.Store.RecordInvoice(ctx, "acme", "vendor", "INV-1"))
	if seen, err = s.Store.InvoiceSeen(ctx, "acme", "vendor", "INV-1"); err != nil || !seen {
		t.Fatalf("after record: %v, %v", seen, err)
	}
}

func invoicesRecordTwiceIsANoOp(t *testing.T, s Subject) {
	must(t, s.Store.RecordInvoice(ctx, "acme", "vendor", "INV-1"))
	must(t, s.Store.RecordInvoice(ctx, "acme", "vendor", "INV-1"))
	if seen, err := s.Store.InvoiceSeen(ctx, "acme", "vendor", "INV-1"); err != nil || !seen {
		t.Fatalf("%v, %v", seen, err)
	}
}

func invoicesScopedByTenantVendorNumber(t *testing.T, s Subject) {
	must(t, s.Store.RecordInvoice(ctx, "acme", "vendor", "INV-1"))
	for _, k := range [][3]string{{"other", "vendor", "INV-1"}, {"acme", "other", "INV-1"}, {"acme", "vendor", "INV-2"}} {
		if seen, err := s.Store.InvoiceSeen(ctx, k[0], k[1], k[2]); err != nil || seen {
			t.Fatalf("%v seen (%v) after only acme/vendor/INV-1 was recorded", k, err)
		}
	}
}
