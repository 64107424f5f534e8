// The official TypeScript MCP SDK's client against a server binary: list the tools, call one
// with good and with bad arguments, and call a Hidden one. Prints one JSON object.
// Usage: node sdk_client.cjs <node_modules dir> <server binary>
const path = require("path");
const [modules, server] = process.argv.slice(2);
const sdk = (p) => require(path.join(modules, "@modelcontextprotocol/sdk/dist/cjs", p));
const { Client } = sdk("client/index.js");
const { StdioClientTransport } = sdk("client/stdio.js");

(async () => {
  const client = new Client({ name: "sdk-round-trip", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: server, args: [], stderr: "ignore" }));
  const { tools } = await client.listTools();
  const quote = await client.callTool({ name: "stock_quote", arguments: { symbol: "ACME" } });
  const bad = await client.callTool({ name: "stock_quote", arguments: { symbol: 7 } });
  let hidden;
  try {
    hidden = await client.callTool({ name: "calendar_cancel_event", arguments: {} });
  } catch (err) {
    hidden = { protocolError: String(err.message) };
  }
  const info = client.getServerVersion();
  console.log(JSON.stringify({ info, tools, quote, bad, hidden }));
  await client.close();
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
