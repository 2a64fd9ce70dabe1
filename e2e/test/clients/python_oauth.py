"""The Python MCP SDK (`mcp` 2.3) authorizing itself at an Aptix host's /mcp with OAuth, as a remote
client does: on the host's 401 it reads the Protected Resource Metadata, registers itself with the
authorization server (dynamic client registration), and runs the authorization code flow with PKCE.

The browser step is the test's: the script prints {"authorize": <url>} and reads the callback URL
(with the code) from stdin. It then lists the tools and calls one its scopes allow and one they do not,
and prints one JSON line with what it saw."""
import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def redirect(url: str) -> None:
    print(json.dumps({"authorize": url}), flush=True)


async def callback() -> AuthorizationCodeResult:
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    query = parse_qs(urlparse(line.strip()).query)
    return AuthorizationCodeResult(
        code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
    )


def seen(result) -> dict:
    return {
        "texts": [block.text for block in result.content if getattr(block, "type", None) == "text"],
        "isError": bool(result.is_error),
    }


async def main(url: str) -> None:
    storage = MemoryStorage()
    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="aptix-e2e-python",
            redirect_uris=["http://127.0.0.1:9/callback"],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    async with create_mcp_http_client(auth=auth) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.discover()
                out: dict = {"tools": [tool.name for tool in (await session.list_tools()).tools]}
                out["allowed"] = seen(await session.call_tool("agent_hello_world", {"name": "Ada"}))
                out["refused"] = seen(
                    await session.call_tool("testing_calculator", {"operation": "add", "a": 1, "b": 2})
                )
                out["scope"] = storage.tokens.scope if storage.tokens else None
                print(json.dumps(out), flush=True)


asyncio.run(main(sys.argv[1]))
