"""A raw MCP server (no SDK) whose one tool, `burst`, writes everything it
has to say about a call and the call's result in a single write: four
progress notifications, a log message and a tools/list_changed, then the
response. A gateway that reads them in one go must still deliver them to
its client in that order."""

import json
import sys


def send(*messages):
    sys.stdout.write("".join(json.dumps(m) + "\n" for m in messages))
    sys.stdout.flush()


TOOL = {"name": "burst", "description": "Progress, a log and list_changed, then the result, in one write.",
        "inputSchema": {"type": "object"}}

for line in sys.stdin:
    message = json.loads(line)
    method, id_ = message.get("method"), message.get("id")
    if id_ is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id_, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
            "serverInfo": {"name": "burst", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id_, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        token = message["params"].get("_meta", {}).get("progressToken")
        burst = [{"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i, "total": 4}} for i in range(1, 5)]
        burst.append({"jsonrpc": "2.0", "method": "notifications/message",
                      "params": {"level": "info", "data": "burst log"}})
        burst.append({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        burst.append({"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": "done"}]}})
        send(*burst)
    else:
        send({"jsonrpc": "2.0", "id": id_, "result": {}})
