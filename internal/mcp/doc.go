// Package mcp is airlock's Model Context Protocol server: it lets an AI
// agent's tool calls run in airlock sandboxes. One server serves one MCP
// session, over stdio (`airlock mcp`, for a desktop agent, reaching the
// daemon through the Go client) or over streamable HTTP at the daemon's
// /mcp (on the sandbox manager, after internal/api authenticated the
// tenant's key). Both run the same tools over Backend, the sandbox
// operations and the document jobs' sandboxes (internal/jobs) of one
// tenant.
//
// What it adds to the API, because an agent host cannot do it itself:
//   - every sandbox a session created is killed when the session ends (and
//     by its TTL, which the operator caps), and a session sees and touches
//     only the sandboxes it created;
//   - tool outputs are bounded (exec output, files, documents);
//   - documents are read from the host only under the operator's docs
//     root, through an os.Root: no "..", no absolute path outside it, no
//     symlink out of it;
//   - text that came out of a sandbox or a document is returned as data,
//     fenced and labelled untrusted (it may carry instructions aimed at
//     the agent), never in a tool description, a prompt or the server's
//     instructions, which are static;
//   - every sandbox carries the session (mcp.session) and the client's
//     declared name and version (mcp.client, mcp.client_version) as
//     metadata, so each of its audit records names them.
//
// What it must never do: log or audit arguments, commands, paths or
// content (logs carry the tool, session, tenant, sandbox id, outcome code
// and duration); parse a document on the host (the jobs send bytes into
// sandboxes); let one tenant's session reach another's sandboxes (the
// Backend is bound to the session's tenant, and an HTTP session to the key
// that opened it).
package mcp
