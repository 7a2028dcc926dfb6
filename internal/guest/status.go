package guest

import (
	"google.golang.org/grpc/codes"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// grpcCodes is how an error class travels between the agent and the host:
// the agent sends a class as its gRPC code (StatusCode) and the host reads
// the code back as the class (mapErr). One table, so the two directions
// cannot drift apart.
var grpcCodes = []struct {
	class error
	code  codes.Code
}{
	{errdefs.ErrInvalidArgument, codes.InvalidArgument},
	{errdefs.ErrNotFound, codes.NotFound},
	{errdefs.ErrAlreadyExists, codes.AlreadyExists},
	{errdefs.ErrFailedPrecondition, codes.FailedPrecondition},
	{errdefs.ErrResourceExhausted, codes.ResourceExhausted},
	{errdefs.ErrPermissionDenied, codes.PermissionDenied},
	{errdefs.ErrDeadlineExceeded, codes.DeadlineExceeded},
	{errdefs.ErrUnavailable, codes.Unavailable},
}

// StatusCode is the gRPC code the agent answers an error of class with
// (an errdefs class, as errdefs.Class returns); codes.Internal for any
// other.
func StatusCode(class error) codes.Code {
	for _, c := range grpcCodes {
		if c.class == class {
			return c.code
		}
	}
	return codes.Internal
}

// classOfCode is the class a gRPC code from the agent stands for;
// ErrInternal for a code the table does not name.
func classOfCode(code codes.Code) error {
	for _, c := range grpcCodes {
		if c.code == code {
			return c.class
		}
	}
	return errdefs.ErrInternal
}
