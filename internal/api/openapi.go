package api

import _ "embed"

// openAPIDoc is the OpenAPI 3.0 description of every route, served at
// /openapi.json. It is the only copy; openapi_test.go keeps it and the route
// table in step.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the OpenAPI document (for `airlock` to print or save).
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }
