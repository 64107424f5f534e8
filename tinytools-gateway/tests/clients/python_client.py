"""The official MCP Python SDK (PyPI `mcp`) against the tinytools-gateway binary, for
tests/clients.rs. Over stdio or streamable HTTP it initializes, lists the tools, searches,
calls a tool through `call_tool` with good and bad arguments, calls an unknown and a Hidden
name, and closes the session; it prints one JSON object on stdout. The SDK's own log
(warnings such as "Session termination failed") is captured and reported in `sdk_log`.

    python python_client.py stdio <gateway-binary> <gateway-args...>
    python python_client.py http <url>
"""

import asyncio
import json
import logging
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


class Captured(logging.Handler):
    """Keeps every record the SDK logs at warning or above."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.lines = []

    def emit(self, record):
        self.lines.append(f"{record.levelname} {record.name}: {record.getMessage()}")


def field(obj, snake, camel):
    """SDK 2 names fields in snake case; SDK 1 in camel case."""
    return getattr(obj, snake, None) if hasattr(obj, snake) else getattr(obj, camel, None)


def text(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def exercise(session):
    init = await session.initialize()
    listed = await session.list_tools()
    out = {
        "server": field(init, "server_info", "serverInfo").name,
        "protocol": field(init, "protocol_version", "protocolVersion"),
        "instructions": bool(init.instructions),
        "tools": [tool.name for tool in listed.tools],
        "manifest": (listed.tools[0].description or "") if listed.tools else "",
    }
    found = await session.call_tool("tool_search", {"query": "stock price for a ticker symbol"})
    body = json.loads(text(found))
    out["search"] = [match["name"] for match in body.get("matches", [])]

    async def call(name, arguments):
        result = await session.call_tool("call_tool", {"name": name, "arguments": arguments})
        return {"isError": bool(field(result, "is_error", "isError")), "text": text(result)}

    out["calls"] = {
        "good": await call("fixture__stock_quote", {"symbol": "ACME"}),
        "bad": await call("fixture__stock_quote", {"symbol": 42, "extra": True}),
        "unknown": await call("fixture__no_such_tool", {}),
        "hidden": await call("fixture__crypto_price", {"symbol": "BTC"}),
    }
    return out


async def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("stdio", "http"):
        print("usage: python_client.py stdio <gateway> <args...> | http <url>", file=sys.stderr)
        return 2
    captured = Captured()
    logging.getLogger().addHandler(captured)
    logging.getLogger().setLevel(logging.WARNING)
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "stdio":
        transport = stdio_client(StdioServerParameters(command=rest[0], args=rest[1:]))
    else:
        transport = streamable_http_client(rest[0])
    async with transport as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            out = await exercise(session)
    # The transport has closed (over HTTP: the session's DELETE has been answered).
    out["transport"] = mode
    out["sdk_log"] = captured.lines
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
