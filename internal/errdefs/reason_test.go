package errdefs

import (
	"errors"
	"fmt"
	"testing"
)

func TestReason(t *testing.T) {
	err := fmt.Errorf("create: %w", EgressOpen("egress self-check failed: %s", "tcp-public"))
	if !errors.Is(err, ErrEgressOpen) || !IsFailedPrecondition(err) || Code(err) != "failed_precondition" ||
		Reason(err) != "egress_open" || err.Error() != "create: egress self-check failed: tcp-public" {
		t.Fatalf("EgressOpen: %v code %q reason %q", err, Code(err), Reason(err))
	}
	if plain := FailedPrecondition("sandbox has ended"); Reason(plain) != "" || errors.Is(plain, ErrEgressOpen) {
		t.Fatalf("a plain class carries a reason: %q", Reason(plain))
	}
	if FromReason("egress_open") != ErrEgressOpen || FromReason("") != nil || FromReason("nope") != nil {
		t.Fatal("FromReason")
	}
}
