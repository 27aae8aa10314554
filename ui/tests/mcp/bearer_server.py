"""A Streamable HTTP MCP server (Python `mcp` SDK, low level) behind a bearer
token, for the gateway's URL upstreams: a request without
`Authorization: Bearer $BEARER_TOKEN` gets 401 before the SDK sees it.

Usage: bearer_server.py  (BEARER_TOKEN in the environment)
Listens on 127.0.0.1 on a free port and prints `port N` on stdout; every
refused request is counted in `refused N` lines on stderr. Its one tool
`whoami` answers with the headers it was called with (not the token)."""

import os
import socket
import sys

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

TOKEN = os.environ["BEARER_TOKEN"]
refused = 0


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[
        types.Tool(name="whoami", description="Says which headers reached the server.",
                   input_schema={"type": "object", "properties": {}}),
    ])


async def call_tool(ctx, params):
    if params.name != "whoami":
        return types.CallToolResult(content=[types.TextContent(type="text", text="unknown")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"authorized; x-tenant={TENANT['last']}")])


TENANT = {"last": None}
server = Server("bearer", on_list_tools=list_tools, on_call_tool=call_tool)
app = server.streamable_http_app()


async def guarded(scope, receive, send):
    global refused
    if scope["type"] == "http":
        headers = dict(scope["headers"])
        if headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
            refused += 1
            print(f"refused {refused}", file=sys.stderr, flush=True)
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": b"no token"})
            return
        tenant = headers.get(b"x-tenant")
        TENANT["last"] = tenant.decode() if tenant else None
    await app(scope, receive, send)


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(f"port {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
