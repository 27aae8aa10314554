"""An MCP server (Python `mcp` SDK, low level) with what the official
conformance runner's server scenarios call: its reference tools, resources,
prompts and completions, written from the requirements each scenario states
(`conformance list` / the scenario descriptions), so the gateway can be run
through the whole suite and compared with the same server reached directly.

Usage: conformance_server.py          stdio (behind `tether mcp proxy`)
       conformance_server.py --http   Streamable HTTP on 127.0.0.1, a free
                                      port printed as `port N` on stdout
"""

import base64
import itertools
import json
import socket
import struct
import sys
import zlib

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventStore


def png_1x1_red():
    """A 1x1 red PNG, built rather than pasted as an opaque blob."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def wav_silence():
    """A tenth of a second of 8 kHz 8-bit mono silence."""
    samples = b"\x80" * 800
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 8000, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples)) + samples
    return base64.b64encode(b"RIFF" + struct.pack("<I", len(body)) + body).decode()


PNG = png_1x1_red()
WAV = wav_silence()
NO_ARGUMENTS = {"type": "object", "properties": {}}


def tool(name, description, schema=None):
    return types.Tool(name=name, description=description, input_schema=schema or NO_ARGUMENTS)


def text(value):
    return types.TextContent(type="text", text=value)


TOOLS = [
    tool("test_simple_text", "Returns simple text."),
    tool("test_image_content", "Returns an image."),
    tool("test_audio_content", "Returns audio."),
    tool("test_embedded_resource", "Returns an embedded resource."),
    tool("test_multiple_content_types", "Returns text, an image and a resource."),
    tool("test_tool_with_logging", "Logs three messages while it runs."),
    tool("test_tool_with_progress", "Reports progress while it runs."),
    tool("test_error_handling", "Always fails."),
    tool("test_reconnection", "Closes its SSE stream mid-call, then answers."),
    tool("test_sampling", "Asks the client's model.",
         {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}),
    tool("test_elicitation", "Asks the user.",
         {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
    tool("test_elicitation_sep1034_defaults", "Asks the user with defaults for every primitive type."),
    tool("test_elicitation_sep1330_enums", "Asks the user with every kind of enum."),
    types.Tool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features",
               input_schema={
                   "$schema": "https://json-schema.org/draft/2020-12/schema",
                   "type": "object",
                   "$defs": {"address": {"type": "object", "properties": {
                       "street": {"type": "string"}, "city": {"type": "string"}}}},
                   "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                   "additionalProperties": False,
               }),
]

DEFAULTS_SCHEMA = {"type": "object", "properties": {
    "name": {"type": "string", "default": "John Doe"},
    "age": {"type": "integer", "default": 30},
    "score": {"type": "number", "default": 95.5},
    "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "default": True},
}}

ENUMS_SCHEMA = {"type": "object", "properties": {
    "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "oneOf": [
        {"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"},
        {"const": "value3", "title": "Third Option"}]},
    "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                   "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "items": {"anyOf": [
        {"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"},
        {"const": "value3", "title": "Third Choice"}]}},
}}


def progress_token(ctx):
    meta = ctx.meta or {}
    return meta.get("progress_token", meta.get("progressToken"))


def elicited(prefix, result):
    return types.CallToolResult(content=[text(f"{prefix}: action={result.action}, content={json.dumps(result.content)}")])


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    args = params.arguments or {}
    name = params.name
    related = ctx.request_id
    if name == "test_simple_text":
        return types.CallToolResult(content=[text("This is a simple text response for testing.")])
    if name == "test_image_content":
        return types.CallToolResult(content=[types.ImageContent(type="image", data=PNG, mime_type="image/png")])
    if name == "test_audio_content":
        return types.CallToolResult(content=[types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")])
    if name == "test_embedded_resource":
        resource = types.TextResourceContents(uri="test://embedded-resource", mime_type="text/plain",
                                              text="This is an embedded resource content.")
        return types.CallToolResult(content=[types.EmbeddedResource(type="resource", resource=resource)])
    if name == "test_multiple_content_types":
        resource = types.TextResourceContents(uri="test://mixed-content-resource", mime_type="application/json",
                                              text=json.dumps({"test": "data", "value": 123}))
        return types.CallToolResult(content=[
            text("Multiple content types test:"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            types.EmbeddedResource(type="resource", resource=resource),
        ])
    if name == "test_tool_with_logging":
        for i, message in enumerate(["Tool execution started", "Tool processing data", "Tool execution completed"]):
            if i:
                await anyio.sleep(0.05)
            await ctx.session.send_log_message("info", message, logger="conformance", related_request_id=related)
        return types.CallToolResult(content=[text("Tool with logging executed successfully")])
    if name == "test_tool_with_progress":
        token = progress_token(ctx)
        for i, done in enumerate([0, 50, 100]):
            if i:
                await anyio.sleep(0.05)
            if token is not None:
                await ctx.session.send_progress_notification(token, done, 100, related_request_id=related)
        return types.CallToolResult(content=[text("Tool with progress executed successfully")])
    if name == "test_error_handling":
        return types.CallToolResult(content=[text("This tool intentionally returns an error for testing")],
                                    is_error=True)
    if name == "test_reconnection":
        # Over HTTP the stream is closed mid-call and the answer comes on the
        # client's reconnection (replayed from the event store); on stdio
        # there is no stream to close.
        if ctx.close_sse_stream is not None:
            await anyio.sleep(0.1)
            await ctx.close_sse_stream()
        await anyio.sleep(0.2)
        return types.CallToolResult(content=[text("Reconnection test completed")])
    if name == "test_sampling":
        message = types.SamplingMessage(role="user", content=text(args.get("prompt", "")))
        result = await ctx.session.create_message([message], max_tokens=100, related_request_id=related)
        answer = result.content.text if getattr(result.content, "type", None) == "text" else str(result.content)
        return types.CallToolResult(content=[text(f"LLM response: {answer}")])
    if name == "test_elicitation":
        schema = {"type": "object", "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}},
            "required": ["username", "email"]}
        result = await ctx.session.elicit_form(args.get("message", ""), schema, related_request_id=related)
        return types.CallToolResult(content=[text(f"User response: action={result.action}, content={json.dumps(result.content)}")])
    if name == "test_elicitation_sep1034_defaults":
        result = await ctx.session.elicit_form("Please review and update the form fields with defaults",
                                               DEFAULTS_SCHEMA, related_request_id=related)
        return elicited("Elicitation completed", result)
    if name == "test_elicitation_sep1330_enums":
        result = await ctx.session.elicit_form("Please select options from the enum fields", ENUMS_SCHEMA,
                                               related_request_id=related)
        return elicited("Elicitation completed", result)
    if name == "json_schema_2020_12_tool":
        return types.CallToolResult(content=[text(f"received {json.dumps(args)}")])
    return types.CallToolResult(content=[text(f"unknown tool {name}")], is_error=True)


RESOURCES = [
    types.Resource(uri="test://static-text", name="static-text", description="A static text resource.",
                   mime_type="text/plain"),
    types.Resource(uri="test://static-binary", name="static-binary", description="A static binary resource.",
                   mime_type="image/png"),
    types.Resource(uri="test://watched-resource", name="watched-resource",
                   description="A resource to subscribe to.", mime_type="text/plain"),
]
subscribed = set()


async def list_resources(ctx, params):
    return types.ListResourcesResult(resources=RESOURCES)


async def list_resource_templates(ctx, params):
    template = types.ResourceTemplate(uri_template="test://template/{id}/data", name="template-data",
                                      description="Data for an id.", mime_type="application/json")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(ctx, params):
    uri = str(params.uri)
    if uri == "test://static-text":
        contents = types.TextResourceContents(uri=uri, mime_type="text/plain",
                                              text="This is the content of the static text resource.")
    elif uri == "test://static-binary":
        contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
    elif uri == "test://watched-resource":
        contents = types.TextResourceContents(uri=uri, mime_type="text/plain", text="Watched resource content.")
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        ident = uri[len("test://template/"):-len("/data")]
        data = {"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"}
        contents = types.TextResourceContents(uri=uri, mime_type="application/json",
                                              text=json.dumps(data, separators=(",", ":")))
    else:
        raise ValueError(f"no resource {uri}")
    return types.ReadResourceResult(contents=[contents])


async def subscribe(ctx, params):
    subscribed.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx, params):
    subscribed.discard(str(params.uri))
    return types.EmptyResult()


PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A prompt without arguments."),
    types.Prompt(name="test_prompt_with_arguments", description="A prompt with two arguments.", arguments=[
        types.PromptArgument(name="arg1", description="First test argument", required=True),
        types.PromptArgument(name="arg2", description="Second test argument", required=True)]),
    types.Prompt(name="test_prompt_with_embedded_resource", description="A prompt embedding a resource.",
                 arguments=[types.PromptArgument(name="resourceUri", description="URI of the resource to embed",
                                                 required=True)]),
    types.Prompt(name="test_prompt_with_image", description="A prompt with an image."),
]


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=PROMPTS)


def user(content):
    return types.PromptMessage(role="user", content=content)


async def get_prompt(ctx, params):
    args = params.arguments or {}
    if params.name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        messages = [user(text(f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"))]
    elif params.name == "test_prompt_with_embedded_resource":
        resource = types.TextResourceContents(uri=args.get("resourceUri", "test://example-resource"),
                                              mime_type="text/plain", text="Embedded resource content for testing.")
        messages = [user(types.EmbeddedResource(type="resource", resource=resource)),
                    user(text("Please process the embedded resource above."))]
    elif params.name == "test_prompt_with_image":
        messages = [user(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
                    user(text("Please analyze the image above."))]
    else:
        raise ValueError(f"no prompt {params.name}")
    return types.GetPromptResult(messages=messages)


async def complete(ctx, params):
    words = ["paris", "park", "party", "test", "testing"]
    partial = params.argument.value
    values = [w for w in words if w.startswith(partial)]
    return types.CompleteResult(completion=types.Completion(values=values, total=len(values), has_more=False))


async def set_logging_level(ctx, params):
    return types.EmptyResult()


class MemoryEvents(EventStore):
    """Every event of the process kept in memory, so a client that reconnects
    with Last-Event-ID gets what its closed stream missed."""

    def __init__(self):
        self.events = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id, message):
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        at = next((i for i, (eid, _, _) in enumerate(self.events) if eid == last_event_id), None)
        if at is None:
            return None
        stream = self.events[at][1]
        for event_id, stream_id, message in self.events[at + 1:]:
            if stream_id == stream and message is not None:
                from mcp.server.streamable_http import EventMessage
                await send_callback(EventMessage(message, event_id))
        return stream


server = Server(
    "tether-conformance-upstream",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_list_resource_templates=list_resource_templates,
    on_read_resource=read_resource,
    on_subscribe_resource=subscribe,
    on_unsubscribe_resource=unsubscribe,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_completion=complete,
    on_set_logging_level=set_logging_level,
)


async def stdio():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options(NotificationOptions()))


def http():
    import uvicorn
    app = server.streamable_http_app(event_store=MemoryEvents(), retry_interval=500)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    print(f"port {listener.getsockname()[1]}", flush=True)
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[listener])


if __name__ == "__main__":
    if sys.argv[1:] == ["--http"]:
        http()
    else:
        anyio.run(stdio)
