#!/usr/bin/env python3
"""A small agent that speaks Tether's agent protocol with the standard library only.

It connects to a running console (`tether serve`), opens a session, registers
two tools, runs three batches the way a model step would, runs each tool body
when the console calls it back, and prints the outcomes.

    tether serve --headless --answer approve --socket /tmp/tether.sock &
    python3 demos/agent.py --socket /tmp/tether.sock

Exit status: 0 when every batch came back with the outcomes expected below,
1 when one did not, 3 when no console could be reached (as `tether send`).
"""

import argparse
import json
import os
import socket
import sys
import time


# The same words as `tether send`, the hook bridges and the MCP gateway.
NOT_RUNNING = "the Tether console is not running (start `tether serve`)"
EXIT_NO_CONSOLE = 3


def default_socket():
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return os.path.join(runtime, "tether", "console.sock")
    import tempfile
    return os.path.join(tempfile.gettempdir(), "tether-%d" % os.getuid(), "console.sock")


def fail(why):
    """Ends the agent with `why` on stderr, as `tether send` does, and no traceback."""
    print("agent.py: " + why, file=sys.stderr)
    sys.exit(EXIT_NO_CONSOLE)


class Agent:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            fail("%s: nothing listens on %s" % (NOT_RUNNING, path))
        except OSError as error:
            fail("cannot reach the Tether console at %s: %s" % (path, error.strerror or error))
        self.reader = self.sock.makefile("r", encoding="utf-8")
        self.next_id = 1
        self.notes = {}

    def send(self, frame):
        self.sock.sendall((json.dumps(frame) + "\n").encode("utf-8"))

    def call(self, method, params):
        """Sends a request and serves tool/invoke call-backs until its answer comes."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = self.reader.readline()
            if not line:
                fail("the console closed the connection")
            frame = json.loads(line)
            if frame.get("method") == "tool/invoke":
                self.invoke(frame)
            elif frame.get("method"):
                pass  # tool/call, tool/result, tools/change notifications
            elif frame.get("id") == request_id:
                if "error" in frame:
                    raise SystemExit("%s failed: %s" % (method, frame["error"]["message"]))
                return frame["result"]

    def invoke(self, frame):
        params = frame["params"]
        args = params["arguments"]
        if params["name"] == "clock":
            reply = {"value": {"unix": int(time.time()), "zone": args.get("zone", "UTC")}}
        elif params["name"] == "write_note":
            self.notes[args["title"]] = args["text"]
            reply = {"value": {"saved": args["title"], "notes": len(self.notes)}}
        else:
            self.send({"jsonrpc": "2.0", "id": frame["id"], "error": {"code": -32000, "message": "no such tool"}})
            return
        self.send({"jsonrpc": "2.0", "id": frame["id"], "result": reply})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--socket", default=default_socket())
    args = parser.parse_args()

    agent = Agent(args.socket)
    agent.call("session/open", {"session_id": "py-%d" % os.getpid(), "owner": "example", "label": "python-agent"})
    agent.call("tools/register", {
        "name": "clock",
        "description": "The current time",
        "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}},
        "concurrency": "always",
    })
    agent.call("tools/register", {
        "name": "write_note",
        "description": "Saves a note",
        "parameters": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
            "required": ["title", "text"],
        },
        "concurrency": "never",
    })
    names = [d["name"] for d in agent.call("tools/list", {})]
    print("visible tools:", ", ".join(names))

    batches = [
        ([("t1", "clock", {"zone": "UTC"}), ("t2", "clock", {"zone": "CET"})], [None, None]),
        ([("n1", "write_note", {"title": "todo", "text": "ship it"}), ("n2", "write_note", {"title": 7})],
         [None, "INVALID_ARGS"]),
        ([("u1", "teleport", {})], ["UNKNOWN_TOOL"]),
    ]
    ok = True
    for calls, expected in batches:
        result = agent.call("batch/execute", {
            "max_parallelism": 4,
            "calls": [{"id": i, "name": n, "arguments": json.dumps(a)} for i, n, a in calls],
        })
        for outcome, want in zip(result["outcomes"], expected):
            print(json.dumps(outcome))
            if outcome["code"] != want:
                ok = False
                print("unexpected: %s ended %s, expected %s" % (outcome["call_id"], outcome["code"], want),
                      file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, ConnectionResetError):
        fail("the console closed the connection")
