// Package errdefs is airlock's closed set of error classes.
//
// Every error that can reach a user is wrapped (with %w and context) around
// one of these sentinels, so that the API can map it to an HTTP status and a
// stable machine-readable code, and a client can tell whether to retry, fix
// its input, or give up. Packages never invent new classes; they pick one.
//
// The table between codes and HTTP statuses is here too (http.go), the one
// the API answers with and the Go client and the Python SDK read bare
// statuses with.
package errdefs

import (
	"context"
	"errors"
	"fmt"
)

// The classes. Their Error() text is the stable code the API returns.
var (
	ErrNotFound           = errors.New("not_found")
	ErrInvalidArgument    = errors.New("invalid_argument")
	ErrAlreadyExists      = errors.New("already_exists")
	ErrFailedPrecondition = errors.New("failed_precondition")
	ErrDeadlineExceeded   = errors.New("deadline_exceeded")
	ErrResourceExhausted  = errors.New("resource_exhausted")
	ErrPermissionDenied   = errors.New("permission_denied")
	ErrUnavailable        = errors.New("unavailable")
	ErrInternal           = errors.New("internal")
)

var all = []error{
	ErrNotFound, ErrInvalidArgument, ErrAlreadyExists, ErrFailedPrecondition,
	ErrDeadlineExceeded, ErrResourceExhausted, ErrPermissionDenied, ErrUnavailable,
	ErrInternal,
}

// Reasons refine a class where a caller decides on one particular
// failure, across a package or the API boundary (where it travels as
// error.reason), instead of matching message text.
var (
	// ErrEgressOpen: a sandbox's egress self-check found a way out (class
	// failed_precondition); nothing may be sent into that sandbox.
	ErrEgressOpen = errors.New("egress_open")
)

var reasons = []error{ErrEgressOpen}

// classed is an error that carries a class (and maybe a reason) and a
// message without the class text repeated in the message.
type classed struct {
	class  error
	reason error // nil, or one of reasons
	msg    string
}

func (e *classed) Error() string { return e.msg }

func (e *classed) Unwrap() []error {
	if e.reason != nil {
		return []error{e.class, e.reason}
	}
	return []error{e.class}
}

// EgressOpen returns a failed_precondition error with the reason
// ErrEgressOpen.
func EgressOpen(format string, args ...any) error {
	return &classed{class: ErrFailedPrecondition, reason: ErrEgressOpen, msg: fmt.Sprintf(format, args...)}
}

// Reason returns err's stable reason code ("egress_open"), or "".
func Reason(err error) string {
	for _, r := range reasons {
		if errors.Is(err, r) {
			return r.Error()
		}
	}
	return ""
}

// FromReason maps a reason code back to its sentinel; nil for "" or an
// unknown code.
func FromReason(code string) error {
	for _, r := range reasons {
		if r.Error() == code {
			return r
		}
	}
	return nil
}

// New returns an error of the given class with a formatted message.
func New(class error, format string, args ...any) error {
	return &classed{class: class, msg: fmt.Sprintf(format, args...)}
}

// NotFound, InvalidArgument, ... are shorthands for New(class, ...).
func NotFound(format string, args ...any) error { return New(ErrNotFound, format, args...) }
func InvalidArgument(format string, args ...any) error {
	return New(ErrInvalidArgument, format, args...)
}
func AlreadyExists(format string, args ...any) error {
	return New(ErrAlreadyExists, format, args...)
}
func FailedPrecondition(format string, args ...any) error {
	return New(ErrFailedPrecondition, format, args...)
}
func DeadlineExceeded(format string, args ...any) error {
	return New(ErrDeadlineExceeded, format, args...)
}
func ResourceExhausted(format string, args ...any) error {
	return New(ErrResourceExhausted, format, args...)
}
func PermissionDenied(format string, args ...any) error {
	return New(ErrPermissionDenied, format, args...)
}
func Unavailable(format string, args ...any) error { return New(ErrUnavailable, format, args...) }

// Class returns the class sentinel of err, or ErrInternal when err carries
// none. A context deadline counts as DeadlineExceeded and a cancellation as
// Unavailable, so callers need not special-case them.
func Class(err error) error {
	if err == nil {
		return nil
	}
	for _, c := range all {
		if errors.Is(err, c) {
			return c
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrDeadlineExceeded
	}
	if errors.Is(err, context.Canceled) {
		return ErrUnavailable
	}
	return ErrInternal
}

// Code returns the stable code string for err ("not_found", ...).
func Code(err error) string {
	if err == nil {
		return ""
	}
	return Class(err).Error()
}

// FromCode maps a stable code back to its class (for clients decoding API
// errors); unknown codes map to ErrInternal.
func FromCode(code string) error {
	for _, c := range all {
		if c.Error() == code {
			return c
		}
	}
	return ErrInternal
}

// Is* helpers read better at call sites than errors.Is(err, errdefs.ErrX).
func IsNotFound(err error) bool           { return errors.Is(err, ErrNotFound) }
func IsInvalidArgument(err error) bool    { return errors.Is(err, ErrInvalidArgument) }
func IsFailedPrecondition(err error) bool { return errors.Is(err, ErrFailedPrecondition) }
func IsDeadlineExceeded(err error) bool   { return Class(err) == ErrDeadlineExceeded }
func IsUnavailable(err error) bool        { return errors.Is(err, ErrUnavailable) }
