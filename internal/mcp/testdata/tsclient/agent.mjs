// A scripted agent loop (no model) with the official TypeScript MCP
// client, against airlock's MCP server. Run by the Go tests
// (internal/mcp TestTypeScriptClient, internal/e2e TestMCPAgentLoop) with
// node_modules from scripts/setup.sh's npm cache beside this file.
//
//   node agent.mjs '{"transport": "http", "url": ".../mcp", "key": "alk_...",
//                    "contract": "/path/contract.pdf", "review": {...} | null}'
//   node agent.mjs '{"transport": "stdio", "command": "airlock", "args": ["mcp"], "env": {...}, ...}'
//
// It prints one JSON object of what it saw on stdout; the Go test judges
// it. Any failure exits 1 with the reason on stderr.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import Ajv from "ajv";

const cfg = JSON.parse(process.argv[2]);
const out = {};

function fail(msg) {
  console.error("agent: " + msg);
  process.exit(1);
}

function transport() {
  if (cfg.transport === "stdio") {
    return new StdioClientTransport({ command: cfg.command, args: cfg.args, env: cfg.env, stderr: "inherit" });
  }
  return new StreamableHTTPClientTransport(new URL(cfg.url), {
    requestInit: { headers: { Authorization: "Bearer " + cfg.key } },
  });
}

// call runs a tool; the client itself validates structuredContent
// against the tool's output schema.
async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    return { error: JSON.parse(res.content[0].text).error, meta: res._meta };
  }
  return res;
}

async function must(client, name, args) {
  const res = await call(client, name, args);
  if (res.error) fail(`${name}: ${JSON.stringify(res.error)}`);
  return res;
}

async function listTools(client) {
  const ajv = new Ajv({ strict: false });
  const { tools } = await client.listTools();
  for (const t of tools) {
    for (const [what, schema] of [["input", t.inputSchema], ["output", t.outputSchema]]) {
      if (!schema || schema.type !== "object") fail(`${t.name}: no ${what} object schema`);
      ajv.compile(schema); // throws on a schema that does not compile
    }
  }
  return tools.map((t) => t.name).sort();
}

const script = `import hashlib, json
data = open("job/contract.pdf", "rb").read()
facts = {"bytes": len(data), "pdf": data.startswith(b"%PDF"), "sha256": hashlib.sha256(data).hexdigest()}
open("job/facts.json", "w").write(json.dumps(facts))
print(json.dumps(facts))
`;

async function sandboxLoop(client) {
  const created = await must(client, "sandbox_create", { template: cfg.template || "base", ttl_seconds: 600 });
  const id = created.structuredContent.sandbox_id;
  const pdf = readFileSync(cfg.contract);
  await must(client, "sandbox_write_file", { sandbox_id: id, path: "/job/contract.pdf", content_base64: pdf.toString("base64") });
  await must(client, "sandbox_write_file", { sandbox_id: id, path: "/job/analyze.py", content: script });
  const ran = await must(client, "sandbox_exec", { sandbox_id: id, cmd: "python3 job/analyze.py", timeout_seconds: 120 });
  out.exec = { exit_code: ran.structuredContent.exit_code, untrusted: ran.structuredContent.untrusted,
    fenced: ran.content.some((c) => c._meta && c._meta["airlock.dev/untrusted"] === true) };
  const read = await must(client, "sandbox_read_file", { sandbox_id: id, path: "/job/facts.json" });
  out.facts = JSON.parse(read.structuredContent.content);
  out.contract_bytes = pdf.length;
  const big = await must(client, "sandbox_exec", { sandbox_id: id, cmd: "head -c 200000 /dev/zero | tr '\\0' a" });
  out.big = { stdout: big.structuredContent.stdout.length, truncated: big.structuredContent.truncated };
  return id;
}

async function review(client) {
  if (!cfg.review) return;
  const res = await call(client, "review_contract", cfg.review);
  if (res.error) {
    out.review = { error: res.error };
    return;
  }
  const sc = res.structuredContent;
  out.review = { ok: sc.ok, error: sc.error || null, untrusted: sc.untrusted, document: sc.document,
    statuses: (sc.result ? sc.result.findings : []).map((f) => f.status) };
  if (sc.report_uri) {
    const rr = await client.readResource({ uri: sc.report_uri });
    out.review.report = { mime: rr.contents[0].mimeType, bytes: rr.contents[0].text.length,
      html: rr.contents[0].text.includes("<html") };
  }
}

async function main() {
  const client = new Client({ name: "airlock-ts-agent", version: "0.3.0" });
  await client.connect(transport());
  out.server = client.getServerVersion().name;
  out.tools = await listTools(client);
  const id = await sandboxLoop(client);
  await review(client);
  const refused = await call(client, "review_contract", { path: "../../etc/passwd" });
  out.refused = refused.error ? refused.error.code : "not refused";
  const listed = await must(client, "sandbox_list", {});
  out.listed = listed.structuredContent.sandboxes.map((s) => s.sandbox_id);
  const killed = await must(client, "sandbox_kill", { sandbox_id: id });
  out.killed = killed.structuredContent.killed;
  out.sandbox_id = id;
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => fail(e && e.stack ? e.stack : String(e)));
