"""A Python MCP SDK client for the host's tests: connects to URL in ERA ("modern": 2026-07-28 via
server/discover, "legacy": the 2025 initialize handshake), lists the tools, calls testing_calculator,
lists and gets the prompts, lists and reads the resources, and prints one JSON line with what it saw. On leaving, the SDK ends a legacy session with DELETE."""
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
            prompts = await session.list_prompts()
            guidance = await session.get_prompt("mode_general")
            resources = await session.list_resources()
            guide = await session.read_resource("aptix://tools/testing_calculator/guide")
            print(json.dumps({
                "prompts": [prompt.name for prompt in prompts.prompts],
                "guidance": guidance.messages[0].content.text,
                "resources": [str(resource.uri) for resource in resources.resources],
                "guide": guide.contents[0].text,
                "protocolVersion": session.protocol_version,
                "tools": [tool.name for tool in tools.tools],
                "sum": result.content[0].text,
                "isError": bool(result.is_error),
                "unknownError": unknown_error,
                "mcpSessionId": get_session_id() if callable(get_session_id) else None,
            }))


asyncio.run(main(sys.argv[1], sys.argv[2]))
