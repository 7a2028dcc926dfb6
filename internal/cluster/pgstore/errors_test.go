package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/airlock-dev/airlock/internal/cluster/clustertest"

	"github.com/airlock-dev/airlock/internal/errdefs"
)

func TestMapErrClasses(t *testing.T) {
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "m"}) }
	for _, tc := range []struct {
		err  error
		want error
	}{
		{pg("23505"), errdefs.ErrAlreadyExists},
		{pg("23503"), errdefs.ErrNotFound},
		{pg("23514"), errdefs.ErrInvalidArgument},
		{pg("23502"), errdefs.ErrInvalidArgument},
		{pg("22P02"), errdefs.ErrInvalidArgument},
		{pg("P0001"), errdefs.ErrFailedPrecondition},
		{pg("40001"), errdefs.ErrUnavailable},
		{pg("40P01"), errdefs.ErrUnavailable},
		{pg("08006"), errdefs.ErrUnavailable},
		{pg("57P01"), errdefs.ErrUnavailable},
		{pg("57P03"), errdefs.ErrUnavailable},
		{pg("53100"), errdefs.ErrResourceExhausted},
		{pg("57014"), errdefs.ErrDeadlineExceeded},
		{pg("42601"), errdefs.ErrInternal}, // a syntax error is our bug
		{&pgconn.ConnectError{}, errdefs.ErrUnavailable},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), errdefs.ErrUnavailable},
		{errdefs.NotFound("x"), errdefs.ErrNotFound},
		{context.Canceled, errdefs.ErrUnavailable}, // errdefs' own rule for cancellation
		{errors.New("other"), errdefs.ErrInternal},
	} {
		if got := errdefs.Class(mapErr(tc.err)); got != tc.want {
			t.Errorf("mapErr(%v) is %v, want %v", tc.err, got, tc.want)
		}
	}
	if !retryable(&pgconn.PgError{Code: "40001"}) || !retryable(&pgconn.PgError{Code: "40P01"}) || retryable(&pgconn.PgError{Code: "23505"}) {
		t.Error("retryable: want serialization failures and deadlocks only")
	}
}

// TestMigrationsUnderAdvisoryLock opens one database from eight
// goroutines at once: the schema is applied once and every store opens;
// a schema from a newer binary is refused.
func TestMigrationsUnderAdvisoryLock(t *testing.T) {
	dsn3 := clustertest.Database(t) // empty: no schema yet
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := Open(ctx, dsn3, Options{})
			if err == nil {
				st.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		must(t, err)
	}
	v, err := Migrate(ctx, dsn3)
	must(t, err)
	st, err := Open(ctx, dsn3, Options{})
	must(t, err)
	defer st.Close()
	if got, _ := st.SchemaVersion(ctx); got != v || v != len(migrations) {
		t.Fatalf("version %d, Migrate said %d, want %d", got, v, len(migrations))
	}
	var applied int
	must(t, st.pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied))
	if applied != len(migrations) {
		t.Fatalf("%d migration rows after 8 concurrent opens, want %d", applied, len(migrations))
	}
	st.exec(t, `INSERT INTO schema_migrations (version, name) VALUES ($1, 'from the future')`, len(migrations)+1)
	if _, err := Open(ctx, dsn3, Options{}); !errdefs.IsFailedPrecondition(err) {
		t.Fatalf("open of a newer schema: %v, want failed_precondition", err)
	}
}
