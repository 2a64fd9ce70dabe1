"""The Python MCP SDK (`mcp` 2.3) at an Aptix host's /mcp, configured with that URL only: ERA "modern"
(the SDK's default, server/discover and 2026-07-28) or "legacy" (the 2025 initialize handshake).

The SDK has no agent loop and no model, so this script plays the model's steps in order, each one
read from the result of the step before (the session id comes from agent_change_mode's answer, never
from the test): a refused direct call, a mode change, calls of the new mode's tools through
aptix_call_tool with that id (one with an invalid argument), a gated call. It prints one JSON line
with everything it saw, for e2e/test/mcp-clients.test.ts to assert."""
import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def seen(result) -> dict:
    """A tool result as the model would read it: its text blocks, whether it is an error, its _meta."""
    return {
        "texts": [block.text for block in result.content if getattr(block, "type", None) == "text"],
        "isError": bool(result.is_error),
        "meta": result.meta,
    }


async def main(url: str, era: str) -> None:
    async with streamable_http_client(url) as streams:
        read, write = streams[0], streams[1]
        # No elicitation callback: the SDK then declares no elicitation capability, so a gated call
        # cannot ask the user here and waits for an approval decided elsewhere.
        async with ClientSession(read, write) as session:
            if era == "modern":
                await session.discover()
            else:
                await session.initialize()
            out: dict = {"protocolVersion": session.protocol_version}
            out["tools"] = [tool.name for tool in (await session.list_tools()).tools]

            # Step 1: the model calls a tool of another mode directly, then through the pair without a session.
            out["direct"] = seen(await session.call_tool("testing_delay", {"milliseconds": 1}))
            out["sessionless"] = seen(
                await session.call_tool("aptix_call_tool", {"name": "testing_delay", "arguments": {"milliseconds": 1}})
            )

            # Step 2: it does what the refusal says: change mode.
            change = seen(
                await session.call_tool(
                    "agent_change_mode", {"mode": "tool_diagnostics", "branch": False, "reason": "Test the delay tool."}
                )
            )
            out["change"] = change
            session_id = json.loads(change["texts"][0])["sessionId"]  # read from the result, as a model would
            out["sessionId"] = session_id
            out["toolsAfter"] = [tool.name for tool in (await session.list_tools()).tools]

            # Step 3: a tool of the new mode, through the pair, with the id it read; first with a bad argument.
            out["invalid"] = seen(
                await session.call_tool(
                    "aptix_call_tool",
                    {"sessionId": session_id, "name": "testing_delay", "arguments": {"milliseconds": "soon"}},
                )
            )
            out["delay"] = seen(
                await session.call_tool(
                    "aptix_call_tool", {"sessionId": session_id, "name": "testing_delay", "arguments": {"milliseconds": 1}}
                )
            )
            found = seen(
                await session.call_tool("aptix_find_tools", {"sessionId": session_id, "query": "refund an order", "limit": 3})
            )
            out["found"] = json.loads(found["texts"][0])

            # Step 4: a gated call through the pair.
            out["refund"] = seen(
                await session.call_tool(
                    "aptix_call_tool",
                    {
                        "sessionId": session_id,
                        "name": "testing_issue_refund",
                        "arguments": {"orderId": f"PY-{era}", "amount": 5000, "currency": "EUR"},
                    },
                )
            )
            print(json.dumps(out))


asyncio.run(main(sys.argv[1], sys.argv[2]))
