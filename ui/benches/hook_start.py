#!/usr/bin/env python3
"""The hook bridge's cost against starting the binary, on a release build.

    cargo build --release -p tether
    python3 ui/benches/hook_start.py target/release/tether [BASELINE_TETHER] [--runs N]

Starts `tether serve --headless` with a rule that allows `Bash`, then runs,
interleaved, `tether hook claude-code` on Claude Code's captured PreToolUse
payload (one process per call, as the agent runs it, process start and the
console's round trip included) and `tether --version` (starting the binary
alone), for the binary and, when given, a baseline binary (the code before a
change) in the same run. Prints medians and the hook ÷ start ratio; a
`SUMMARY` line per binary.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "claude-code-pre-bash.json")
POLICY = {"rules": [{"id": "ls-is-fine", "stage": "pre-execute", "match": {"tool": "Bash"},
                     "action": {"type": "allow"}}]}


def timed(argv, stdin, env):
    start = time.perf_counter_ns()
    done = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter_ns() - start
    return elapsed, done


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tether")
    parser.add_argument("baseline", nargs="?")
    parser.add_argument("--runs", type=int, default=201)
    args = parser.parse_args()
    binaries = [("tether", os.path.abspath(args.tether))]
    if args.baseline:
        binaries.append(("baseline", os.path.abspath(args.baseline)))

    payload = json.load(open(FIXTURE))
    payload["tool_input"]["command"] = "ls"
    stdin = json.dumps(payload).encode()
    work = tempfile.mkdtemp(prefix="tether-hook-bench-")
    socket = os.path.join(work, "console.sock")
    policy = os.path.join(work, "allow.json")
    with open(policy, "w") as f:
        json.dump(POLICY, f)
    # The hook logs where an installed one would: the state directory.
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"))
    # The console prints a line per decision: into a file, so it never
    # blocks on a pipe nobody reads.
    printed = open(os.path.join(work, "serve.out"), "w")
    console = subprocess.Popen([binaries[0][1], "serve", "--headless", "--policy", policy, "--socket", socket],
                               stdout=printed, env=env)
    try:
        for _ in range(200):
            if os.path.exists(socket):
                break
            time.sleep(0.05)
        samples = {name: {"hook": [], "start": []} for name, _ in binaries}
        hook_args = ["hook", "claude-code", "--socket", socket]
        for run in range(args.runs + 10):
            for name, binary in binaries:
                elapsed, done = timed([binary] + hook_args, stdin, env)
                if b'"allow"' not in done.stdout:
                    sys.exit("%s: the hook did not allow: %r %r" % (name, done.stdout, done.stderr))
                if run >= 10:  # warm-up
                    samples[name]["hook"].append(elapsed)
                elapsed, done = timed([binary, "--version"], None, env)
                if done.returncode != 0:
                    sys.exit("%s --version failed" % name)
                if run >= 10:
                    samples[name]["start"].append(elapsed)
    finally:
        console.terminate()
        console.wait()
    for name, binary in binaries:
        hook = statistics.median(samples[name]["hook"]) / 1e6
        start = statistics.median(samples[name]["start"]) / 1e6
        print("SUMMARY %s (%s): hook claude-code, a rule decides: median %.2f ms; starting the binary "
              "(--version) %.2f ms = %.2fx (goal: at most 1.5x); %d runs each, interleaved"
              % (name, binary, hook, start, hook / start, args.runs))


if __name__ == "__main__":
    main()
