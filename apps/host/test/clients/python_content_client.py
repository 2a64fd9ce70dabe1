"""A Python MCP SDK client for content beyond text: connects to URL in ERA ("modern": 2026-07-28 via
server/discover, "legacy": the 2025 initialize handshake), calls content_chart and content_stats (the
test/fixtures/content-tools package), and prints one JSON line with the blocks and structured content
the SDK parsed into its own types."""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def block(item):
    data = item.model_dump(mode="json", exclude_none=True, by_alias=True)
    data["pythonType"] = type(item).__name__
    return data


async def main(url: str, era: str) -> None:
    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            if era == "modern":
                await session.discover()
            else:
                await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            chart = await session.call_tool("content_chart", {"kind": "chart"})
            stats = await session.call_tool("content_stats", {"values": [1, 2, 6]})
            print(json.dumps({
                "protocolVersion": session.protocol_version,
                "outputSchema": tools["content_stats"].output_schema,
                "chart": [block(item) for item in chart.content],
                "chartIsError": bool(chart.is_error),
                "structured": stats.structured_content,
                "statsText": [item.text for item in stats.content],
            }))


asyncio.run(main(sys.argv[1], sys.argv[2]))
