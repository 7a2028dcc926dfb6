// Package wire is the HTTP API's JSON: every request and response shape,
// defined once and imported by both sides, the server (internal/api) and
// the Go client (client, which re-exports them under its own names). Field
// names are the API contract; openapi.json documents the same shapes and a
// test holds each schema equal to its type here, and the Python SDK
// mirrors them.
//
// These are the API's own types, not the sandbox manager's: the server
// converts at the boundary (internal/api/convert.go), so a change inside
// the manager never changes the wire. The package imports only the
// standard library.
package wire
