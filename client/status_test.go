package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/airlock-dev/airlock/client"
)

// A response without airlock's error body (a proxy in between) is
// classified by its status with the table the API and the Python SDK use;
// a bare 409 is failed_precondition there too.
func TestErrorsWithoutBodyClassifiedByStatus(t *testing.T) {
	for status, want := range map[int]error{
		http.StatusConflict:            client.ErrFailedPrecondition,
		http.StatusNotFound:            client.ErrNotFound,
		http.StatusUnauthorized:        client.ErrPermissionDenied,
		http.StatusBadGateway:          client.ErrUnavailable,
		http.StatusTeapot:              client.ErrInvalidArgument,
		http.StatusInternalServerError: client.ErrInternal,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "proxy says no", status)
		}))
		c, err := client.New(srv.URL, "k")
		if err != nil {
			t.Fatal(err)
		}
		err = c.Sandbox("sbx-1").Refresh(context.Background())
		var ae *client.Error
		if !errors.Is(err, want) || !errors.As(err, &ae) || ae.Status != status {
			t.Errorf("status %d: err %v, want class %v", status, err, want)
		}
		srv.Close()
	}
}

// An error's reason travels with it: a create whose egress self-check
// failed is ErrEgressOpen and still ErrFailedPrecondition; an unknown
// reason leaves the class alone.
func TestErrorReason(t *testing.T) {
	body := `{"error": {"code": "failed_precondition", "message": "egress self-check failed: tcp-public", "reason": "egress_open"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "k")
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateSandbox(context.Background(), client.CreateOptions{Template: "base", Probe: true})
	var ae *client.Error
	if !errors.Is(err, client.ErrEgressOpen) || !errors.Is(err, client.ErrFailedPrecondition) ||
		!errors.As(err, &ae) || ae.Reason != "egress_open" {
		t.Fatalf("err %v (%#v), want egress_open", err, ae)
	}
	body = `{"error": {"code": "failed_precondition", "message": "m", "reason": "something_new"}}`
	err = c.Sandbox("sbx-1").Refresh(context.Background())
	if errors.Is(err, client.ErrEgressOpen) || !errors.Is(err, client.ErrFailedPrecondition) {
		t.Fatalf("unknown reason: %v", err)
	}
}
