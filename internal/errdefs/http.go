package errdefs

// statusTable is the one table between error codes and HTTP statuses. The
// API answers each class with the status of its first "answers" row; a
// client that gets a response without airlock's error body (a proxy in
// between) takes the code of the first row for its status. The Python SDK
// keeps a copy (sdk/python/airlock/errors.py, _BY_STATUS) that a test holds
// equal to StatusCodes.
var statusTable = []struct {
	status  int
	class   error
	answers bool // the API answers class with this status
}{
	{400, ErrInvalidArgument, true},
	// 401 is how the API answers a missing, unknown or revoked key, with
	// code permission_denied; an authenticated caller refused is 403.
	{401, ErrPermissionDenied, false},
	{403, ErrPermissionDenied, true},
	{404, ErrNotFound, true},
	// Both classes are 409; a bare 409 reads as failed_precondition.
	{409, ErrFailedPrecondition, true},
	{409, ErrAlreadyExists, true},
	// 413 is the API's answer to a body over its limit.
	{413, ErrResourceExhausted, false},
	{429, ErrResourceExhausted, true},
	{500, ErrInternal, true},
	{502, ErrUnavailable, false},
	{503, ErrUnavailable, true},
	{504, ErrDeadlineExceeded, true},
}

// HTTPStatus is the status the API answers an error of class with (500
// for a class it does not know).
func HTTPStatus(class error) int {
	for _, r := range statusTable {
		if r.answers && r.class == class {
			return r.status
		}
	}
	return 500
}

// CodeForHTTPStatus is the code of an error response that carries none:
// the table's, else invalid_argument for any other 4xx and internal for
// the rest.
func CodeForHTTPStatus(status int) string {
	for _, r := range statusTable {
		if r.status == status {
			return r.class.Error()
		}
	}
	if status >= 400 && status < 500 {
		return ErrInvalidArgument.Error()
	}
	return ErrInternal.Error()
}

// StatusCodes is CodeForHTTPStatus for every status in the table.
func StatusCodes() map[int]string {
	out := map[int]string{}
	for _, r := range statusTable {
		if _, ok := out[r.status]; !ok {
			out[r.status] = r.class.Error()
		}
	}
	return out
}
