// The official TypeScript SDK client against the tinytools-gateway binary, for
// tests/typescript.rs. It lists the gateway's tools, searches them, and calls one tool of
// each fronted server (npm server-everything, PyPI mcp-server-time) through `call_tool`,
// then prints one JSON object on stdout.
//
//   node gateway_client.cjs <peers-root> stdio <gateway-binary> <gateway-args...>
//   node gateway_client.cjs <peers-root> http <url>
//
// <peers-root> is where .ci/mcp-peers installed the servers; its node_modules holds
// @modelcontextprotocol/sdk, loaded from there.
"use strict";

const path = require("node:path");
const { createRequire } = require("node:module");

const [root, mode, ...rest] = process.argv.slice(2);
if (!root || !["stdio", "http"].includes(mode) || rest.length === 0) {
  console.error("usage: gateway_client.cjs <peers-root> stdio <gateway> <args...> | http <url>");
  process.exit(2);
}
const sdk = createRequire(path.join(path.resolve(root), "node_modules", "gateway-client.cjs"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");

const text = (result) =>
  (result.content || [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");

async function main() {
  const transport =
    mode === "stdio"
      ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  const client = new Client({ name: "tinytools-gateway-ts-test", version: "0.0.0" });
  await client.connect(transport);

  const listed = await client.listTools();
  const search = async (query) => {
    const result = await client.callTool({ name: "tool_search", arguments: { query } });
    const body = JSON.parse(text(result));
    return (body.matches || []).map((match) => match.name);
  };
  const call = async (name, args) => {
    const result = await client.callTool({ name: "call_tool", arguments: { name, arguments: args } });
    return { isError: Boolean(result.isError), text: text(result) };
  };
  const out = {
    transport: mode,
    server: client.getServerVersion(),
    tools: listed.tools.map((tool) => tool.name),
    search: {
      echo: await search("echo back a message"),
      time: await search("what is the current time in a timezone"),
    },
    calls: {
      echo: await call("everything__echo", { message: "hello from the TypeScript SDK" }),
      time: await call("time__get_current_time", { timezone: "Europe/Paris" }),
    },
  };
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  console.error((error && error.stack) || String(error));
  process.exit(1);
});
