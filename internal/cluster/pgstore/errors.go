package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

// PostgreSQL error codes the store tells apart (SQLSTATE, appendix A of
// the PostgreSQL manual).
const (
	codeUniqueViolation      = "23505"
	codeForeignKeyViolation  = "23503"
	codeCheckViolation       = "23514"
	codeNotNullViolation     = "23502"
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeRaiseException       = "P0001" // the schema's triggers
	codeAdminShutdown        = "57P01"
	codeCrashShutdown        = "57P02"
	codeCannotConnectNow     = "57P03"
	codeQueryCanceled        = "57014"
)

// retryable reports a failure that running the same transaction again
// can cure: another transaction won a race.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == codeSerializationFailure || pe.Code == codeDeadlockDetected)
}

// isConnLoss reports an error that means the server was not there: a
// failed dial, a connection cut, a server shutting down or starting up.
func isConnLoss(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), pe.Code == codeAdminShutdown, pe.Code == codeCrashShutdown,
			pe.Code == codeCannotConnectNow:
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ENOENT):
		return true
	}
	// pgx reports a use of a connection it already found broken this way.
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

// mapErr gives driver errors an errdefs class, keeping the original in
// the chain. Errors that already carry a class, and context errors, pass
// through unchanged.
func mapErr(err error) error {
	if err == nil || errdefs.Class(err) != errdefs.ErrInternal ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if class := pgClass(pe); class != nil {
			return fmt.Errorf("%w: %w", class, err)
		}
	}
	if isConnLoss(err) {
		return fmt.Errorf("%w: %w", errdefs.Unavailable("database unreachable"), err)
	}
	return err
}

// pgClass is the class of a server error, nil for none of ours.
func pgClass(pe *pgconn.PgError) error {
	switch {
	case pe.Code == codeUniqueViolation:
		return errdefs.AlreadyExists("already exists")
	case pe.Code == codeForeignKeyViolation:
		return errdefs.NotFound("referenced row does not exist")
	case pe.Code == codeCheckViolation, pe.Code == codeNotNullViolation, strings.HasPrefix(pe.Code, "22"):
		return errdefs.InvalidArgument("constraint violated")
	case pe.Code == codeRaiseException:
		return errdefs.FailedPrecondition("refused by the schema: %s", pe.Message)
	case pe.Code == codeSerializationFailure, pe.Code == codeDeadlockDetected:
		return errdefs.Unavailable("contended transaction")
	case pe.Code == codeQueryCanceled:
		return errdefs.DeadlineExceeded("statement canceled")
	case strings.HasPrefix(pe.Code, "53"):
		return errdefs.ResourceExhausted("database out of resources")
	case strings.HasPrefix(pe.Code, "08"), pe.Code == codeAdminShutdown, pe.Code == codeCrashShutdown,
		pe.Code == codeCannotConnectNow:
		return errdefs.Unavailable("database unavailable")
	}
	return nil
}
