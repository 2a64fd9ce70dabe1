"""A Python MCP SDK client for the host's tests: connects to URL in ERA ("modern": 2026-07-28 via
server/discover, "legacy": the 2025 initialize handshake), lists the tools, calls testing_calculator,
and prints one JSON line with what it saw. On leaving, the SDK ends a legacy session with DELETE."""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, era: str) -> None:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        get_session_id = streams[2] if len(streams) > 2 else None
        async with ClientSession(read, write) as session:
            if era == "modern":
                await session.discover()
            else:
                await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool("testing_calculator", {"operation": "add", "a": 2, "b": 3})
            unknown_error = None
            try:
                await session.call_tool("no_such_tool", {})
            except Exception as error:  # the SDK raises McpError for a JSON-RPC error
                unknown_error = str(error)
            print(json.dumps({
                "protocolVersion": session.protocol_version,
                "tools": [tool.name for tool in tools.tools],
                "sum": result.content[0].text,
                "isError": bool(result.is_error),
                "unknownError": unknown_error,
                "mcpSessionId": get_session_id() if callable(get_session_id) else None,
            }))


asyncio.run(main(sys.argv[1], sys.argv[2]))
