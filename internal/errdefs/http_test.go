package errdefs

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// Every class has the status the API has always answered it with.
func TestHTTPStatusOfEveryClass(t *testing.T) {
	want := map[error]int{
		ErrInvalidArgument: 400, ErrPermissionDenied: 403, ErrNotFound: 404,
		ErrAlreadyExists: 409, ErrFailedPrecondition: 409, ErrResourceExhausted: 429,
		ErrDeadlineExceeded: 504, ErrUnavailable: 503, ErrInternal: 500,
	}
	for _, c := range all {
		if got := HTTPStatus(c); got != want[c] {
			t.Errorf("HTTPStatus(%v) = %d, want %d", c, got, want[c])
		}
	}
}

func TestCodeForHTTPStatus(t *testing.T) {
	for status, want := range map[int]string{
		400: "invalid_argument", 401: "permission_denied", 403: "permission_denied", 404: "not_found",
		405: "invalid_argument", 409: "failed_precondition", 413: "resource_exhausted", 418: "invalid_argument",
		429: "resource_exhausted", 500: "internal", 502: "unavailable", 503: "unavailable", 504: "deadline_exceeded",
		501: "internal",
	} {
		if got := CodeForHTTPStatus(status); got != want {
			t.Errorf("CodeForHTTPStatus(%d) = %q, want %q", status, got, want)
		}
	}
}

// The Python SDK's copy of the table is the table.
func TestPythonSDKStatusTable(t *testing.T) {
	src, err := os.ReadFile("../../sdk/python/airlock/errors.py")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)_BY_STATUS = \{(.*?)\}`).FindSubmatch(src)
	if block == nil {
		t.Fatal("errors.py: no _BY_STATUS table")
	}
	got := map[int]string{}
	for _, m := range regexp.MustCompile(`(\d+):\s*"([a-z_]+)"`).FindAllSubmatch(block[1], -1) {
		n, _ := strconv.Atoi(string(m[1]))
		got[n] = string(m[2])
	}
	want := StatusCodes()
	if len(got) != len(want) {
		t.Errorf("errors.py _BY_STATUS has %d statuses, the table %d: %v vs %v", len(got), len(want), got, want)
	}
	for s, c := range want {
		if got[s] != c {
			t.Errorf("errors.py _BY_STATUS[%d] = %q, want %q", s, got[s], c)
		}
	}
}
