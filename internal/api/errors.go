package api

import (
	"errors"
	"net/http"

	"github.com/airlock-dev/airlock/internal/wire"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// statusError overrides the status an error class would get (401 for a
// missing key, 413 for a body too large, 405 for a wrong method) while
// keeping the class, and so the code, of the error it wraps.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

func withStatus(status int, err error) error { return &statusError{status: status, err: err} }

// errorStatus returns the HTTP status and the stable code for err: the
// class's status from errdefs' table (shared with the Go client and the
// Python SDK), unless a statusError overrides it. Unauthenticated requests
// (no key, unknown or revoked key) are 401 with code permission_denied; an
// authenticated caller refused an operation is 403.
func errorStatus(err error) (int, string) {
	var se *statusError
	if errors.As(err, &se) {
		return se.status, errdefs.Code(se.err)
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge, errdefs.ErrResourceExhausted.Error()
	}
	class := errdefs.Class(err)
	return errdefs.HTTPStatus(class), class.Error()
}

// errorBody is what the client is told. Messages are passed through: they
// describe the caller's own request (its sandbox, its paths) and are written
// by lower layers with that in mind. They are never logged.
func errorBody(err error) wire.ErrorResponse {
	_, code := errorStatus(err)
	msg := err.Error()
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		msg = "request body is larger than the limit of " + itoa(mbe.Limit) + " bytes"
	}
	return wire.ErrorResponse{Error: wire.ErrorBody{Code: code, Message: msg, Reason: errdefs.Reason(err)}}
}
