package api

// route is one entry of the API: a Go 1.22 ServeMux pattern ("METHOD
// /path/{param}"), whether it needs a key, and its handler.
type route struct {
	pattern string
	auth    bool
	handle  handlerFunc
}

// routes is the whole API. The mux is built from it and openapi_test.go
// checks it against openapi.json in both directions, so a route cannot be
// added without being documented.
var routes = []route{
	{"GET /healthz", false, (*server).healthz},
	{"GET /readyz", false, (*server).readyz},
	{"GET /openapi.json", false, (*server).openAPI},
	{"GET /metrics", false, (*server).metrics},

	{"POST /v1/sandboxes", true, (*server).createSandbox},
	{"GET /v1/sandboxes", true, (*server).listSandboxes},
	{"GET /v1/sandboxes/{id}", true, (*server).getSandbox},
	{"DELETE /v1/sandboxes/{id}", true, (*server).killSandbox},
	{"POST /v1/sandboxes/{id}/fork", true, (*server).forkSandbox},
	{"PUT /v1/sandboxes/{id}/egress", true, (*server).setEgress},
	{"PUT /v1/sandboxes/{id}/ttl", true, (*server).setTTL},
	{"POST /v1/sandboxes/{id}/probe", true, (*server).probeSandbox},
	{"POST /v1/sandboxes/{id}/pause", true, (*server).pauseSandbox},
	{"POST /v1/sandboxes/{id}/resume", true, (*server).resumeSandbox},

	{"POST /v1/sandboxes/{id}/exec", true, (*server).exec},
	{"POST /v1/sandboxes/{id}/exec/stream", true, (*server).execStream},

	{"POST /v1/sandboxes/{id}/processes", true, (*server).startProcess},
	{"GET /v1/sandboxes/{id}/processes", true, (*server).listProcesses},
	{"GET /v1/sandboxes/{id}/processes/{pid}", true, (*server).getProcess},
	{"DELETE /v1/sandboxes/{id}/processes/{pid}", true, (*server).killProcess},
	{"POST /v1/sandboxes/{id}/processes/{pid}/wait", true, (*server).waitProcess},
	{"GET /v1/sandboxes/{id}/processes/{pid}/output", true, (*server).processOutput},
	{"POST /v1/sandboxes/{id}/processes/{pid}/stdin", true, (*server).processStdin},
	{"POST /v1/sandboxes/{id}/processes/{pid}/resize", true, (*server).resizeProcess},

	{"PUT /v1/sandboxes/{id}/files", true, (*server).writeFile},
	{"GET /v1/sandboxes/{id}/files", true, (*server).readFile},
	{"DELETE /v1/sandboxes/{id}/files", true, (*server).removeFile},
	{"GET /v1/sandboxes/{id}/files/stat", true, (*server).statFile},
	{"GET /v1/sandboxes/{id}/files/list", true, (*server).listFiles},
	{"POST /v1/sandboxes/{id}/files/mkdir", true, (*server).makeDir},
	{"PUT /v1/sandboxes/{id}/archive", true, (*server).writeArchive},
	{"GET /v1/sandboxes/{id}/archive", true, (*server).readArchive},

	{"GET /v1/templates", true, (*server).listTemplates},
	{"GET /v1/templates/{name}", true, (*server).getTemplate},

	{"GET /v1/audit", true, (*server).audit},
	{"GET /v1/keys", true, (*server).listKeys},

	// The MCP server (Config.MCP): one endpoint, three methods, as MCP's
	// streamable HTTP transport has it.
	{"POST /mcp", true, (*server).mcp},
	{"GET /mcp", true, (*server).mcp},
	{"DELETE /mcp", true, (*server).mcp},
}
