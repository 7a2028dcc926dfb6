package guest

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// Every class the agent sends comes back as itself on the host.
func TestStatusCodeRoundTrip(t *testing.T) {
	for _, class := range []error{errdefs.ErrInvalidArgument, errdefs.ErrNotFound, errdefs.ErrAlreadyExists,
		errdefs.ErrFailedPrecondition, errdefs.ErrResourceExhausted, errdefs.ErrPermissionDenied,
		errdefs.ErrDeadlineExceeded, errdefs.ErrUnavailable, errdefs.ErrInternal} {
		if got := classOfCode(StatusCode(class)); got != class {
			t.Errorf("%v -> %v -> %v", class, StatusCode(class), got)
		}
	}
	if StatusCode(errdefs.ErrInternal) != codes.Internal || classOfCode(codes.Aborted) != errdefs.ErrInternal {
		t.Error("unknown classes and codes are not internal")
	}
}
