#!/usr/bin/env python3
"""A minimal harness around `ward run`, standard library only.

It runs one command the way an agent harness would: sandboxed, with the
run's audit events read live from a pipe (`--events-fd`) and its result
read from a file when it ends (`--result`). In copy-on-write mode
(`--cow`) the command writes to a session instead of the workspace, and
the harness shows the session's pending changes (`ward diff`) for review.

    python3 harness.py [--ward PATH] [--cow] [--net none|proxy]
                       [-w DIR] -- COMMAND [ARG]...

It exits with the command's exit status (ward's own: 125 when ward could
not run it). Events that matter to a model are printed as they happen, so
a harness could tell it at once why something failed (a refused host).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading


def describe(ev):
    """One line for an audit event (docs/audit.md)."""
    kind = ev.get("event", "?")
    if kind == "start":
        cmd = " ".join(ev.get("argv", []))
        extra = ", copy-on-write" if ev.get("cow") else ""
        degraded = ev.get("degraded") or []
        if degraded:
            extra += ", degraded: " + ", ".join(degraded)
        return f"started (tier {ev.get('tier')}, network {ev.get('network')}{extra}): {cmd}"
    if kind == "net":
        where = f"{ev.get('host')}:{ev.get('port')}"
        if ev.get("verdict") == "allow":
            return f"connection allowed to {where}"
        return f"connection REFUSED to {where} ({ev.get('rule')})"
    if kind == "quarantine":
        return f"protected path {ev.get('path')} {ev.get('action')} ({ev.get('reason')})"
    if kind == "error":
        return f"ward could not run it ({ev.get('step')}): {ev.get('error')}"
    if kind == "exit":
        how = f"signal {ev['signal']}" if ev.get("signal") else f"status {ev.get('status')}"
        return f"ended: exit {ev.get('exit_code')} ({how}) after {ev.get('duration_ms')} ms"
    return f"{kind}: {json.dumps(ev)}"


def pump(stream, out, prefix):
    """Copy the command's output, line by line, so it interleaves readably."""
    for line in iter(stream.readline, b""):
        out.write(prefix + line.decode("utf-8", "replace"))
        out.flush()


def main():
    ap = argparse.ArgumentParser(description="Run a command under ward, show its events and result.")
    ap.add_argument("--ward", default=os.environ.get("WARD", "ward"), help="the ward binary")
    ap.add_argument("--cow", action="store_true", help="copy-on-write: review the changes after")
    ap.add_argument("--net", choices=["none", "proxy"], help="network mode")
    ap.add_argument("-w", "--workspace", help="workspace (default: the current directory)")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("missing COMMAND")

    with tempfile.TemporaryDirectory(prefix="ward-harness-") as tmp:
        result_path = os.path.join(tmp, "result.json")
        events_r, events_w = os.pipe()
        argv = [args.ward, "run", "--events-fd", str(events_w), "--result", result_path]
        if args.cow:
            argv.append("--cow")
        if args.net:
            argv += ["--net", args.net]
        if args.workspace:
            argv += ["-w", args.workspace]
        argv += ["--"] + cmd

        proc = subprocess.Popen(argv, pass_fds=[events_w], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Only ward holds the write end now: EOF comes when the run is over.
        os.close(events_w)
        pumps = [threading.Thread(target=pump, args=(proc.stdout, sys.stdout, "stdout| ")),
                 threading.Thread(target=pump, args=(proc.stderr, sys.stdout, "stderr| "))]
        for t in pumps:
            t.start()

        with os.fdopen(events_r, "rb") as events:
            for line in events:
                try:
                    ev = json.loads(line)
                except ValueError:
                    print("event | (not JSON: a line was cut off)", flush=True)
                    continue
                print("event | " + describe(ev), flush=True)

        code = proc.wait()
        for t in pumps:
            t.join()

        try:
            with open(result_path, encoding="utf-8") as f:
                result = json.load(f)
        except (OSError, ValueError) as e:
            print(f"result| none ({e})")
            return code
        print("result| " + json.dumps({k: result.get(k) for k in
                                       ("exit_code", "status", "signal", "timed_out",
                                        "duration_ms", "session", "error") if k in result}))
        if result.get("events_lost"):
            print(f"result| {result['events_lost']} event(s) did not reach the harness")

        if args.cow and result.get("session"):
            sid = result["session"]
            changes = subprocess.run([args.ward, "diff", sid, "--json"], capture_output=True)
            try:
                listed = json.loads(changes.stdout or b"[]")
            except ValueError:
                listed = []
            print(f"review| session {sid}: {len(listed)} pending change(s)")
            for c in listed:
                print(f"review| {c.get('kind')} {c.get('path')}")
            diff = subprocess.run([args.ward, "diff", sid, "--color=never"],
                                  capture_output=True, text=True)
            for line in diff.stdout.splitlines():
                print("diff  | " + line)
            print(f"review| apply with: ward apply {sid}   or drop with: ward discard {sid}")
        return code


if __name__ == "__main__":
    sys.exit(main())
