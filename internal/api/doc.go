// Package api is airlock's HTTP API: authentication with tenant-bound keys,
// the routes (one table in routes.go, read by both the mux and the OpenAPI
// coverage test), the JSON request and response shapes (wire.go: the API's
// own types, converted to and from the sandbox manager's and the store's in
// convert.go, so nothing behind the API changes the wire), errors as
// errdefs codes with the status of errdefs' one status table, and the
// OpenAPI document served at /openapi.json (a test holds it equal to the
// wire types and to the Go client's).
//
// /mcp is the one route it does not answer itself: after authentication
// and admission it hands the request to Config.MCP (internal/mcp's
// streamable HTTP handler) with the caller in the context (CallerFrom).
//
// It owns no sandbox state: every sandbox operation goes to a Backend (the
// sandbox manager), which also writes the audit records for them. The API
// reads the audit log and authenticates keys through *store.Store.
//
// Tenant isolation: the tenant is taken from the key, never from the request,
// and passed to the Backend on every call; a sandbox of another tenant
// answers 404 not_found exactly like a missing one. The API re-checks the
// tenant of every Info the Backend returns, as a second line of defence.
//
// What it must never do: log or count request bodies, command text, guest
// file paths, environment values or error messages (which may quote paths).
// Logs carry the method, route pattern, tenant, sandbox id, status, byte
// counts and duration; metrics carry route patterns and status codes.
package api
