"""A Streamable HTTP MCP server (Python `mcp` SDK, low level) behind a bearer
token, for the gateway's URL upstreams: a request without
`Authorization: Bearer $BEARER_TOKEN` gets 401 before the SDK sees it.

Usage: bearer_server.py  (BEARER_TOKEN in the environment; with TLS_DIR it
serves https with a certificate for 127.0.0.1 from a CA of its own, whose
certificate it writes to $TLS_DIR/ca.pem for the client to trust)
Listens on 127.0.0.1 on a free port and prints `port N` on stdout; every
refused request is counted in `refused N` lines on stderr. Its one tool
`whoami` answers with the headers it was called with (not the token)."""

import os
import pathlib
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


def certificates(directory):
    """A CA and a server certificate for 127.0.0.1 signed by it, as PEM files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "tether test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])).issuer_name(ca_name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    (directory / "ca.pem").write_bytes(ca.public_bytes(pem))
    (directory / "server.pem").write_bytes(leaf.public_bytes(pem))
    (directory / "server.key").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                             serialization.NoEncryption()))
    return {"ssl_certfile": str(directory / "server.pem"), "ssl_keyfile": str(directory / "server.key")}


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    print(f"port {sock.getsockname()[1]}", flush=True)
    tls = certificates(pathlib.Path(os.environ["TLS_DIR"])) if "TLS_DIR" in os.environ else {}
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on", **tls)
    anyio.run(uvicorn.Server(config).serve, [sock])


if __name__ == "__main__":
    main()
