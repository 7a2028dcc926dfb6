// Package api is airlock's HTTP API: authentication with tenant-bound keys,
// the routes (one table in routes.go, read by both the mux and the OpenAPI
// coverage test), JSON request and response shapes, the mapping from errdefs
// classes to HTTP status codes, and the OpenAPI document served at
// /openapi.json.
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
