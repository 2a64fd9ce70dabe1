"""A Python MCP SDK client that answers sampling: connects to URL in ERA ("modern": 2026-07-28 via
server/discover, "legacy": the 2025 initialize handshake), declares sampling through its callback, calls
summarise_with_model (the test/fixtures/sampling-tools package), and prints one JSON line with what its
callback was asked and the tool's answer. On 2025 the server sends sampling/createMessage and the SDK calls
the callback; on 2026-07-28 the call answers input_required, and this client answers each sampling request
with the same callback and retries with the server's requestState (the Python SDK leaves that loop to it)."""
import asyncio
import json
import sys

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, era: str) -> None:
    asked = []

    async def sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append({"maxTokens": params.max_tokens, "text": params.messages[0].content.text})
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Python model says hi."),
            model="python-test-model",
            stop_reason="endTurn",
        )

    async with streamable_http_client(url) as streams:
        async with ClientSession(streams[0], streams[1], sampling_callback=sample) as session:
            if era == "modern":
                await session.discover()
            else:
                await session.initialize()
            arguments = {"text": "From Python."}
            result = await session.call_tool("summarise_with_model", arguments, allow_input_required=True)
            while isinstance(result, types.InputRequiredResult):
                responses = {}
                for key, request in (result.input_requests or {}).items():
                    if isinstance(request, types.CreateMessageRequest):
                        responses[key] = await sample(None, request.params)
                result = await session.call_tool(
                    "summarise_with_model",
                    arguments,
                    input_responses=responses,
                    request_state=result.request_state,
                    allow_input_required=True,
                )
            print(json.dumps({
                "protocolVersion": session.protocol_version,
                "asked": asked,
                "result": "\n".join(item.text for item in result.content if item.type == "text"),
                "isError": bool(result.is_error),
            }))


asyncio.run(main(sys.argv[1], sys.argv[2]))
