#!/usr/bin/env python3
"""A scripted MCP client for test-mcp.sh: it starts `$WARD mcp ARGS` with
pipes, speaks newline-delimited JSON-RPC to it and checks the answers, and
what happened ON THE HOST (files, sessions, processes).

Usage: mcp-client.py SCENARIO WORKSPACE_ROOT OUTSIDE_DIR
Prints one line per check, "ok DESC" or "not ok DESC", for test-mcp.sh to
turn into TAP; diagnostics start with "# ". Standard library only.
"""
import json
import os
import random
import select
import signal
import subprocess
import sys
import time

WARD = os.environ["WARD"]
# Generous bounds for "wait until": a loaded CI machine is slow, and a
# bound reached is a failure, never a pass.
WAIT = 120.0


def report(ok, desc):
    print(("ok " if ok else "not ok ") + desc, flush=True)
    return ok


def diag(msg):
    for line in str(msg).splitlines():
        print("# " + line, flush=True)


class Server:
    def __init__(self, root, *args):
        self.p = subprocess.Popen(
            [WARD, "mcp", "-w", root, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=root,
        )
        self.buf = b""
        self.next_id = 1

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout=WAIT):
        """The next message, or None at EOF / after @timeout."""
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            diag("not JSON from the server: %r" % line[:200])
            return {"unparseable": True}

    def request(self, method, params=None, id=None):
        if id is None:
            id = self.next_id
            self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.recv_id(id)

    def recv_id(self, id):
        while True:
            m = self.recv()
            if m is None or m.get("id") == id:
                return m

    def call(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})

    def initialize(self, version="2025-06-18"):
        r = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "ward-test", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self):
        """EOF on stdin; the server's exit status."""
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.p.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None

    def stderr(self):
        try:
            return self.p.stderr.read().decode(errors="replace")
        except ValueError:
            return ""


def error_code(m):
    return (m or {}).get("error", {}).get("code")


def result(m):
    return (m or {}).get("result") or {}


def structured(m):
    return result(m).get("structuredContent") or {}


def text(m):
    c = result(m).get("content") or [{}]
    return c[0].get("text", "")


def sessions():
    out = subprocess.run([WARD, "sessions", "--json"], capture_output=True, text=True)
    try:
        return {s["id"]: s for s in json.loads(out.stdout)}
    except ValueError:
        return {}


def procs_with(token):
    """Host processes whose command line holds @token (ward run's own
    argv holds the command, so it counts too)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if token.encode() in cmd:
            found.append(int(pid))
    return found


def wait_until(pred, bound=WAIT):
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


# ---------------------------------------------------------------------------


def scenario_session(root, outside):
    """initialize, list, run, diff, apply, discard."""
    s = Server(root)
    r = s.initialize("2025-06-18")
    report(result(r).get("protocolVersion") == "2025-06-18", "initialize agrees on 2025-06-18")
    report(result(r).get("serverInfo", {}).get("name") == "ward", "serverInfo names ward")
    report("tools" in result(r).get("capabilities", {}), "the tools capability is offered")
    r = s.request("ping")
    report(result(r) == {} and "error" not in r, "ping answers {}")
    r = s.request("tools/list")
    names = sorted(t["name"] for t in result(r).get("tools", []))
    report(
        names == ["run_command", "session_apply", "session_diff", "session_discard"],
        "tools/list offers the four tools (%s)" % names,
    )
    schema = [t for t in result(r).get("tools", []) if t["name"] == "run_command"]
    props = schema[0]["inputSchema"]["properties"] if schema else {}
    report(
        not ({"policy", "net", "preset", "allow_domain", "env"} & set(props)),
        "run_command's schema offers no policy or network option",
    )

    r = s.call("run_command", {"command": "echo out; echo err >&2; exit 3"})
    st = structured(r)
    report(st.get("exit_code") == 3 and result(r).get("isError") is True,
           "a failing command: exit status 3 and isError")
    report(st.get("stdout") == "out\n", "stdout is returned apart")
    report(st.get("stderr", "").endswith("err\n"), "stderr is returned apart")
    report("exit status 3" in text(r) and "out" in text(r), "the text content says it too")
    report(isinstance(st.get("result"), dict) and st["result"].get("exit_code") == 3,
           "ward's result summary is in structuredContent.result")

    r = s.call("run_command", {"argv": ["printf", "%s|", "a b", "$HOME"]})
    report(structured(r).get("stdout") == "a b|$HOME|" and result(r).get("isError") is False,
           "argv runs without a shell")

    r = s.call("run_command", {"command": "head -c 300000 /dev/zero | tr '\\0' x; echo END"})
    st = structured(r)
    report(st.get("stdout_truncated") is True and st.get("stdout_bytes") == 300004,
           "big output is cut and counted")
    report("bytes of output omitted" in st.get("stdout", "") and st["stdout"].endswith("END\n"),
           "the cut is marked, and the end of the output is kept")
    report(len(st.get("stdout", "")) < 70000, "what is returned stays within the limit")

    r = s.call("run_command", {"command": "printf '\\377\\000\\033[31mred\\n'"})
    out = structured(r).get("stdout")
    report(out is not None and "\ufffd" in out and "red" in out,
           "invalid UTF-8 and NUL bytes come back as U+FFFD, in valid JSON")

    r = s.call("run_command", {"command": "sleep 30", "timeout": 1})
    st = structured(r)
    report(st.get("exit_code") == 124 and st.get("timed_out") is True,
           "a timeout from the request (below the server's) kills the command: 124")

    # Calls run at once: A waits for a file that B makes. Under one call
    # at a time A would wait for its timeout (exit 124).
    s.send({"jsonrpc": "2.0", "id": "A", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {
                "command": "while [ ! -e go ]; do sleep 0.05; done; echo A", "timeout": 60}}})
    s.send({"jsonrpc": "2.0", "id": "B", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "touch go; echo B"}}})
    got = {str((m or {}).get("id")): m for m in (s.recv(), s.recv())}
    report(sorted(got) == ["A", "B"] and structured(got["A"]).get("stdout") == "A\n"
           and structured(got["A"]).get("exit_code") == 0,
           "calls run in parallel: A ends because B ran meanwhile")
    os.unlink(os.path.join(root, "go"))

    os.makedirs(os.path.join(root, "sub"), exist_ok=True)
    r = s.call("run_command", {"command": "pwd", "workspace": "sub"})
    report(structured(r).get("stdout") == os.path.join(root, "sub") + "\n",
           "a workspace beneath the root is used")

    # Copy-on-write: the host's file appears only on apply.
    target = os.path.join(root, "made-by-mcp.txt")
    r = s.call("run_command", {"command": "echo hello > made-by-mcp.txt; cat made-by-mcp.txt",
                               "cow": True})
    sid = structured(r).get("session")
    report(isinstance(sid, str) and len(sid) == 16, "a cow run names its session")
    report(structured(r).get("stdout") == "hello\n", "the command sees its own write")
    report(not os.path.exists(target), "the cow write is not on the host")
    report("1 pending change" in text(r), "the text says a change is pending")
    r = s.call("run_command", {"command": "cat made-by-mcp.txt", "session": sid})
    report(structured(r).get("stdout") == "hello\n", "a later run in the session sees it")
    r = s.call("session_diff", {"session": sid})
    changes = structured(r).get("changes")
    report(result(r).get("isError") is False and "made-by-mcp.txt" in text(r)
           and "+hello" in text(r), "session_diff shows the file and its content")
    report(isinstance(changes, (dict, list)) and "made-by-mcp.txt" in json.dumps(changes),
           "session_diff's structuredContent lists the change")
    report(not os.path.exists(target), "diff changes nothing on the host")
    r = s.call("session_apply", {"session": sid})
    report(result(r).get("isError") is False, "session_apply succeeds")
    try:
        content = open(target).read()
    except OSError:
        content = None
    report(content == "hello\n", "after apply the file is on the host")

    r = s.call("run_command", {"command": "rm made-by-mcp.txt; echo x > other.txt", "cow": True})
    sid2 = structured(r).get("session")
    report(sid2 in sessions(), "the second session exists")
    r = s.call("session_discard", {"session": sid2})
    report(result(r).get("isError") is False, "session_discard succeeds")
    report(sid2 not in sessions(), "the discarded session is gone")
    report(os.path.exists(target) and not os.path.exists(os.path.join(root, "other.txt")),
           "discard left the host as it was")
    r = s.call("session_diff", {"session": sid2})
    report(result(r).get("isError") is True, "a discarded session cannot be diffed")
    report(s.close() == 0, "the server exits 0 at EOF")


def scenario_malformed(root, outside):
    """Hostile JSON-RPC: an error each time, never a crash."""
    s = Server(root)
    marker = os.path.join(root, "nul-marker")
    cases = [
        (b"{not json", -32700, "invalid JSON"),
        (b"[1,2]", -32600, "a batch array"),
        (b"[]", -32600, "an empty batch"),
        (b"42", -32600, "a number"),
        (b'"str"', -32600, "a string"),
        (b'{"jsonrpc":"1.0","id":1,"method":"ping"}', -32600, "jsonrpc 1.0"),
        (b'{"id":1,"method":"ping"}', -32600, "no jsonrpc member"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, "an object id"),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', -32600, "a null id"),
        (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', -32600, "an id of 1e400"),
        (b'{"jsonrpc":"2.0","id":1152921504606846976,"method":"ping"}', -32600, "an id of 2^60"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', -32600, "a fractional id"),
        (b'{"jsonrpc":"2.0","id":"' + b"x" * 300 + b'","method":"ping"}', -32600,
         "a 300-byte id"),
        (b'{"jsonrpc":"2.0","id":"\xff\xfe","method":"ping"}', -32600, "an id not UTF-8"),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600, "a method that is a number"),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"} trailing', -32700, "trailing bytes"),
        (b"[" * 100000 + b"]" * 100000, -32700, "100000 levels of nesting"),
        (b'{"a":' * 50000 + b"1" + b"}" * 50000, -32700, "50000 nested objects"),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', -32600,
         "tools/list before initialize"),
    ]
    for raw, code, desc in cases:
        s.send_raw(raw + b"\n")
        m = s.recv()
        ok = error_code(m) == code
        if not ok:
            diag("%s: got %s" % (desc, json.dumps(m)[:300]))
        report(ok, "%s -> %d" % (desc, code))
    r = s.initialize()
    report(result(r).get("protocolVersion") == "2025-06-18", "initialize still works afterwards")
    s.send_raw(b'{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}\n')
    m = s.recv()
    report(m is not None and m.get("id") == 9007199254740991 and "result" in m,
           "the id 2^53-1 is echoed exactly")
    r = s.request("initialize", {"protocolVersion": "2025-06-18"})
    report(error_code(r) == -32600, "a second initialize -> -32600")
    cases = [
        ("no/such/method", None, -32601, "an unknown method"),
        ("resources/list", None, -32601, "a method ward does not offer"),
        ("tools/call", "just a string", None, "params that are a string"),
        ("tools/call", {"name": 5}, -32602, "a tool name that is a number"),
        ("tools/call", {"name": "rm_rf"}, -32602, "an unknown tool"),
        ("tools/call", {"name": "run_command", "arguments": []}, -32602, "arguments an array"),
        ("tools/call", {"name": "run_command", "arguments": {}}, -32602, "no command"),
        ("tools/call", {"name": "run_command", "arguments": {"command": 5}}, -32602,
         "a command that is a number"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "true", "argv": ["x"]}},
         -32602, "both command and argv"),
        ("tools/call", {"name": "run_command", "arguments": {"argv": []}}, -32602, "empty argv"),
        ("tools/call", {"name": "run_command", "arguments": {"argv": [1]}}, -32602,
         "argv of numbers"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "true", "timeout": "5"}},
         -32602, "a timeout that is a string"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "true", "timeout": -1}},
         -32602, "a negative timeout"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "true", "timeout": 1e300}},
         None, "a timeout of 1e300"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "true", "cow": "yes"}},
         -32602, "cow that is a string"),
        ("tools/call", {"name": "run_command",
                        "arguments": {"command": "true", "session": "../../etc"}},
         -32602, "a session id that is a path"),
        ("tools/call", {"name": "run_command", "arguments": {"command": "x" * 200000}}, -32602,
         "a 200000-byte command"),
        ("tools/call", {"name": "session_diff", "arguments": {}}, -32602, "diff without session"),
        ("tools/call", {"name": "session_diff",
                        "arguments": {"session": "0123456789abcdef", "paths": "x"}},
         -32602, "paths that is a string"),
    ]
    for method, params, code, desc in cases:
        r = s.request(method, params)
        if code is None:
            # params "string": -32602; timeout 1e300: refused by the
            # server's limit, as a tool error.
            ok = error_code(r) == -32602 or result(r).get("isError") is True
        else:
            ok = error_code(r) == code
        if not ok:
            diag("%s: got %s" % (desc, json.dumps(r)[:300]))
        report(ok, "%s -> %s" % (desc, code or "an error"))

    # A NUL inside a string would cut the command short of what was shown.
    s.send_raw(b'{"jsonrpc":"2.0","id":"nul","method":"tools/call","params":{"name":"run_command",'
               b'"arguments":{"command":"touch nul-marker\\u0000; echo hidden"}}}\n')
    r = s.recv_id("nul")
    report(error_code(r) == -32600, "a \\u0000 in a string -> -32600")
    report(not os.path.exists(marker), "and the command did not run (no marker on the host)")

    # Notifications get no answer, even unknown or broken ones.
    s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 999}})
    s.send({"jsonrpc": "2.0", "id": 77, "result": {}})  # a response to nothing
    s.send({"jsonrpc": "2.0", "id": "after-notifications", "method": "ping"})
    r = s.recv()
    m_ok = r is not None and r.get("id") == "after-notifications"
    report(m_ok, "notifications and stray responses get no answer")

    # Oversized: answered once, the rest of the line dropped, still serving.
    s.send_raw(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"' + b"a" * (3 << 20)
               + b'"}}\n')
    m = s.recv()
    report(error_code(m) == -32600 and m.get("id") is None,
           "a 3 MiB message -> -32600 (id null)")
    r = s.request("ping", id="after-big")
    report(r is not None and r.get("id") == "after-big" and "result" in r,
           "the server reads on after an oversized message")
    s.send_raw(b"\n\r\n   \n")
    r = s.request("ping", id="after-blank")
    report(r is not None and "result" in r, "blank lines are ignored")
    status = s.close()
    err = s.stderr()
    report(status == 0, "the server exits 0 at EOF (status %s)" % status)
    report("AddressSanitizer" not in err and "runtime error" not in err,
           "no sanitizer report")


def scenario_widen(root, outside):
    """A client cannot widen the sandbox."""
    s = Server(root, "--timeout", "30")
    s.initialize()
    victim = os.path.join(outside, "victim")
    os.makedirs(victim, exist_ok=True)
    marker = "widen-marker"

    def refused(r, desc):
        ok = result(r).get("isError") is True or error_code(r) is not None
        if not ok:
            diag("%s: %s" % (desc, json.dumps(r)[:400]))
        report(ok, desc + ": refused")

    def no_marker(desc):
        found = [d for d in (outside, victim) if os.path.exists(os.path.join(d, marker))]
        report(not found, desc + ": nothing written outside the root")

    for ws, desc in [
        (victim, "an absolute workspace outside the root"),
        (os.path.relpath(victim, root), "a relative workspace leading out (../)"),
        ("/", "the workspace /"),
        (root + "/../" + os.path.basename(outside) + "/victim", "a workspace with /../ in it"),
    ]:
        r = s.call("run_command", {"command": "touch " + marker, "workspace": ws})
        refused(r, desc)
        no_marker(desc)
    os.symlink(victim, os.path.join(root, "link-out"))
    r = s.call("run_command", {"command": "touch " + marker, "workspace": "link-out"})
    refused(r, "a symlink in the root leading out")
    no_marker("a symlink in the root leading out")

    r = s.call("run_command", {"command": "touch " + marker, "timeout": 31})
    refused(r, "a timeout above the server's --timeout")
    report(not os.path.exists(os.path.join(root, marker)), "and the command did not run")
    r = s.call("run_command", {"command": "touch " + marker, "policy": "/dev/null"})
    report(error_code(r) == -32602, "an unknown argument (policy) -> -32602")
    r = s.call("run_command", {"command": "touch " + marker, "net": "proxy"})
    report(error_code(r) == -32602, "an unknown argument (net) -> -32602")
    report(not os.path.exists(os.path.join(root, marker)), "and neither ran")

    # The policy is the server's: default network none, home hidden.
    secret = os.path.join(os.environ["HOME"], "mcp-secret")
    with open(secret, "w") as f:
        f.write("s3cret\n")
    r = s.call("run_command", {"command": "cat " + secret})
    report("s3cret" not in json.dumps(r), "a file in $HOME stays unreadable")
    r = s.call("run_command", {"argv": ["python3", "-c",
                               "import socket; socket.create_connection(('127.0.0.1', 9), 2)"]})
    report(structured(r).get("exit_code") not in (0, None), "no network by default")

    # A session of another workspace is not this client's.
    other = subprocess.run([WARD, "session", "new", "--cow", "-w", victim], capture_output=True,
                           text=True).stdout.strip()
    report(len(other) == 16, "a session outside the root exists")
    for tool, args in [
        ("run_command", {"command": "touch " + marker, "session": other}),
        ("session_diff", {"session": other}),
        ("session_apply", {"session": other}),
        ("session_discard", {"session": other}),
    ]:
        r = s.call(tool, args)
        refused(r, "%s with a session of another workspace" % tool)
    report(other in sessions(), "that session is untouched")
    no_marker("sessions of another workspace")
    r = s.call("session_diff", {"session": "0123456789abcdef"})
    refused(r, "an unknown session")
    s.close()

    # --cow: every run is copy-on-write; --no-apply: no session_apply.
    s = Server(root, "--cow", "--no-apply")
    s.initialize()
    names = [t["name"] for t in result(s.request("tools/list")).get("tools", [])]
    report("session_apply" not in names, "--no-apply: session_apply is not listed")
    r = s.call("run_command", {"command": "echo x > forced-cow.txt"})
    sid = structured(r).get("session")
    report(isinstance(sid, str) and not os.path.exists(os.path.join(root, "forced-cow.txt")),
           "--cow: a plain run writes to a session, not the host")
    r = s.call("session_apply", {"session": sid or "0123456789abcdef"})
    report(error_code(r) == -32602, "--no-apply: session_apply -> -32602")
    report(not os.path.exists(os.path.join(root, "forced-cow.txt")), "and nothing was applied")
    r = s.call("run_command", {"command": "echo x > forced-cow.txt", "cow": False})
    refused(r, "--cow: cow false")
    plain = subprocess.run([WARD, "session", "new", "-w", root], capture_output=True,
                           text=True).stdout.strip()
    r = s.call("run_command", {"command": "echo x > forced-cow.txt", "session": plain})
    refused(r, "--cow: a plain (not copy-on-write) session")
    report(not os.path.exists(os.path.join(root, "forced-cow.txt")), "the host file never appears")
    s.close()


def scenario_denials(root, outside):
    """The operator allows one domain; what the proxy refused is reported."""
    s = Server(root, "--allow-domain", "allowed.example")
    s.initialize()
    r = s.call("run_command", {"command": "curl -s -m 20 https://denied.example/; echo rc=$?"})
    refused = (structured(r).get("result") or {}).get("net_refused") or []
    report([(x.get("host"), x.get("port")) for x in refused] == [("denied.example", 443)],
           "the refused connection is in structuredContent.result.net_refused")
    report("refused by the policy: denied.example:443" in text(r),
           "and the text names it for the model")
    report(s.close() == 0, "the server exits 0")


def scenario_queue(root, outside):
    """--max-parallel 1: calls wait their turn, in order."""
    s = Server(root, "--max-parallel", "1")
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": "A", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "sleep 0.5; echo A >> order"}}})
    s.send({"jsonrpc": "2.0", "id": "B", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "echo B >> order"}}})
    got = [(s.recv() or {}).get("id"), (s.recv() or {}).get("id")]
    report(got == ["A", "B"], "--max-parallel 1: the second call waits for the first (%s)" % got)
    try:
        order = open(os.path.join(root, "order")).read()
    except OSError:
        order = None
    report(order == "A\nB\n", "--max-parallel 1: the commands ran one after the other")
    # A waiting call that is refused when its turn comes is answered then,
    # without the client having to send anything more.
    s.send({"jsonrpc": "2.0", "id": "C", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "sleep 0.3"}}})
    s.send({"jsonrpc": "2.0", "id": "D", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "true", "workspace": "/"}}})
    s.send({"jsonrpc": "2.0", "id": "E", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "true", "workspace": "/tmp"}}})
    got = [s.recv(timeout=30), s.recv(timeout=30), s.recv(timeout=30)]
    report([(m or {}).get("id") for m in got] == ["C", "D", "E"]
           and result(got[1]).get("isError") and result(got[2]).get("isError"),
           "--max-parallel 1: queued calls refused at their turn are answered at once")
    report(s.close() == 0, "the server exits 0")


def start_sleeper(root, *args):
    token = "86398.%06d" % random.randrange(10 ** 6)
    s = Server(root, *args)
    s.initialize()
    s.send({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
            "params": {"name": "run_command",
                       "arguments": {"command": "sleep %s & sleep %s; wait" % (token, token)}}})
    running = wait_until(lambda: len(procs_with(token)) >= 3)
    return s, token, running


def scenario_vanish(root, outside):
    """A client that disappears mid-call leaves nothing running."""
    # 1. EOF on stdin.
    s, token, running = start_sleeper(root)
    report(running, "EOF: the command runs (ward run, sh, two sleeps)")
    r = s.request("ping", id="during-call")
    report(r is not None and "result" in r and procs_with(token),
           "ping is answered while a call runs")
    status = s.close()
    report(status == 0, "EOF mid-call: the server exits (status %s)" % status)
    gone = wait_until(lambda: not procs_with(token))
    if not gone:
        diag("left: %s" % procs_with(token))
    report(gone, "EOF mid-call: no process of the command remains on the host")

    # 2. The client stops reading: EPIPE on the next response.
    s, token, running = start_sleeper(root)
    report(running, "EPIPE: the command runs")
    s.p.stdout.close()
    try:
        s.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    except BrokenPipeError:
        pass
    try:
        status = s.p.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        status = None
    report(status == 0, "EPIPE: the server exits (status %s)" % status)
    gone = wait_until(lambda: not procs_with(token))
    report(gone, "EPIPE: no process of the command remains on the host")
    s.close()

    # 3. The server itself killed (SIGKILL, as a client's process group
    # teardown can do): the runs see their parent gone.
    s, token, running = start_sleeper(root)
    report(running, "SIGKILL: the command runs")
    s.p.send_signal(signal.SIGKILL)
    s.p.wait()
    gone = wait_until(lambda: not procs_with(token))
    report(gone, "SIGKILL of the server: no process of the command remains")
    s.close()

    # 4. Cancellation: notifications/cancelled ends the call, no answer.
    s, token, running = start_sleeper(root)
    report(running, "cancel: the command runs")
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "long", "reason": "test"}})
    gone = wait_until(lambda: not procs_with(token))
    report(gone, "cancel: the command is ended")
    s.send({"jsonrpc": "2.0", "id": "after-cancel", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "true"}}})
    seen = []
    while True:
        m = s.recv()
        seen.append((m or {}).get("id"))
        if m is None or m.get("id") == "after-cancel":
            break
    report(seen == ["after-cancel"],
           "cancel: no answer to the cancelled call, the server goes on (%s)" % seen)
    s.close()


def scenario_managed(root, outside):
    """The managed ceiling bounds what the server runs: its flags, like a
    user's, may only narrow (MANAGED_DIR: test ceilings, managed-lib.sh)."""
    d = os.environ["MANAGED_DIR"]

    def run(ceiling, marker, *flags):
        os.environ["WARD_TEST_MANAGED_FILE"] = os.path.join(d, ceiling)
        s = Server(root, *flags)
        s.initialize()
        r = s.call("run_command", {"command": "touch " + marker})
        s.close()
        del os.environ["WARD_TEST_MANAGED_FILE"]
        return r, os.path.exists(os.path.join(root, marker))

    r, made = run("main.json", "m-widen", "--allow-domain", "evil.org")
    st = structured(r)
    report(st.get("exit_code") == 125 and result(r).get("isError") is True,
           "a server flag that widens the ceiling: the run exits 125")
    report("network.allow" in json.dumps(r) and "managed" in json.dumps(r),
           "the refusal names the managed rule")
    report(not made, "and the command did not run")
    r, made = run("main.json", "m-narrow", "--allow-domain", "api.example.com")
    report(structured(r).get("exit_code") == 0 and made, "a server flag within the ceiling: it runs")
    r, made = run("main.json", "m-tier", "--tier", "0")
    report(structured(r).get("exit_code") == 125 and not made, "--tier 0 outside allowed_tiers: refused")
    r, made = run("cow.json", "m-cow")
    report(structured(r).get("exit_code") == 125 and not made,
           "require_cow: a server without --cow runs nothing")
    r, made = run("cow.json", "m-cow2", "--cow")
    report(structured(r).get("exit_code") == 0 and not made,
           "require_cow: with --cow the run works, its write in the session")


def live_pid(sid):
    """The supervisor's pid of live session @sid (<state>/live/<id>/pid)."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
    try:
        with open(os.path.join(state, "ward", "live", sid, "pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def pid_gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ")[1][0] == "Z"
    except OSError:
        return True


def scenario_live(root, outside):
    """ward mcp --session: one live session for the connection; commands
    share /tmp; requests that widen are refused; EOF stops the session and
    everything in it."""
    tok = "%06d" % random.randrange(10 ** 6)
    tmpfile = "/tmp/ward-mcp-live-" + tok
    s = Server(root, "--session", "--timeout", "300")
    s.initialize()
    r = s.call("run_command", {"command": "echo shared > %s; echo one" % tmpfile})
    st = structured(r)
    report(st.get("exit_code") == 0 and st.get("stdout") == "one\n",
           "a first command runs (%r)" % text(r)[:300])
    res = st.get("result") or {}
    sid = res.get("session")
    sup = live_pid(sid or "none")
    report(sup is not None, "the session's supervisor runs (pid %s)" % sup)
    report(isinstance(res.get("exec_id"), int), "it ran as a ward exec (exec_id %s)" % res.get("exec_id"))
    r = s.call("run_command", {"argv": ["cat", tmpfile]})
    st = structured(r)
    report(st.get("stdout") == "shared\n",
           "a second command sees the first's file in the session's /tmp (%r)" % st.get("stdout"))
    report((st.get("result") or {}).get("session") == sid and sid,
           "both ran in the same session (%s)" % sid)
    report(not os.path.exists(tmpfile), "the session's /tmp is not the host's")
    os.makedirs(os.path.join(root, "sub"), exist_ok=True)
    r = s.call("run_command", {"command": "pwd", "workspace": "sub"})
    report(structured(r).get("stdout") == os.path.join(root, "sub") + "\n",
           "a workspace beneath the root is the command's directory")

    # Widenings: refused, nothing runs.
    marker = os.path.join(root, "live-widen-" + tok)
    for args, desc in (
        ({"workspace": outside}, "a workspace outside the root"),
        ({"session": "0123456789abcdef"}, "another session"),
        ({"cow": True}, "cow in a session that is not copy-on-write"),
        ({"timeout": 301}, "a timeout above the server's"),
    ):
        args = dict(args, command="touch %s" % marker)
        r = s.call("run_command", args)
        report(result(r).get("isError") is True or error_code(r) is not None,
               "refused: %s (%s)" % (desc, text(r)[:200] or (r or {}).get("error")))
    report(not os.path.exists(marker), "the refused commands did not run")

    # A background command: the call returns once it runs; it outlives
    # its call, later commands do not see it, a cancelled call's command
    # ends without it, and EOF ends it.
    bgsleep = "86398.%s" % tok
    r = s.call("run_command", {"command": "exec sleep %s" % bgsleep, "background": True})
    st = structured(r)
    report(st.get("exit_code") == 0 and st.get("background") is True,
           "background: the call returns once it runs (%r)" % text(r)[:200])
    report(wait_until(lambda: len(procs_with(bgsleep)) >= 1), "background: it runs (host)")
    r = s.call("run_command", {"command": "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"})
    st = structured(r)
    report(st.get("exit_code") == 0 and bgsleep not in st.get("stdout", "x" + bgsleep),
           "background: a later command does not see it in its /proc")
    report(len(procs_with(bgsleep)) >= 1, "background: it outlived that command (host)")
    r = s.call("run_command", {"command": "true", "background": "yes"})
    report(error_code(r) is not None, "background: a non-boolean is refused")
    cancelled = "86396.%s" % tok
    s.send({"jsonrpc": "2.0", "id": "to-cancel", "method": "tools/call",
            "params": {"name": "run_command", "arguments": {"command": "sleep %s" % cancelled}}})
    report(wait_until(lambda: len(procs_with(cancelled)) >= 1), "cancel in a session: the command runs")
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "to-cancel", "reason": "test"}})
    report(wait_until(lambda: not procs_with(cancelled)), "cancel in a session: the command is ended")
    report(len(procs_with(bgsleep)) >= 1, "cancel in a session: the background command is not")

    # A command still running when the connection ends: EOF stops the
    # session and everything in it.
    sleeper = "86397.%s" % tok
    s.send({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
            "params": {"name": "run_command",
                       "arguments": {"command": "sleep %s & sleep %s; wait" % (sleeper, sleeper)}}})
    running = wait_until(lambda: len(procs_with(sleeper)) >= 3)
    report(running, "a long command runs in the session")
    status = s.close()
    report(status == 0, "EOF: the server exits (status %s)" % status)
    gone = wait_until(lambda: not procs_with(sleeper))
    if not gone:
        diag("left: %s" % procs_with(sleeper))
    report(gone, "EOF: no process of the command remains on the host")
    report(wait_until(lambda: not procs_with(bgsleep)), "EOF: the background command is gone (host)")
    if sid:
        report(sup is not None and wait_until(lambda: pid_gone(sup)),
               "EOF: the session's supervisor is gone")
        out = subprocess.run([WARD, "exec", sid, "--", "true"], capture_output=True, text=True)
        report(out.returncode == 125 and "no live sandbox" in out.stderr,
               "EOF: the session has no live sandbox any more (%s)" % out.stderr.strip())

    # The server killed: the session stops with it (its owner is gone).
    s = Server(root, "--session")
    s.initialize()
    r = s.call("run_command", {"command": "true"})
    sid = (structured(r).get("result") or {}).get("session")
    sup = live_pid(sid or "none")
    s.send({"jsonrpc": "2.0", "id": "long", "method": "tools/call",
            "params": {"name": "run_command",
                       "arguments": {"command": "sleep %s & sleep %s; wait" % (sleeper, sleeper)}}})
    report(wait_until(lambda: len(procs_with(sleeper)) >= 3), "SIGKILL: the command runs")
    s.p.send_signal(signal.SIGKILL)
    s.p.wait()
    report(wait_until(lambda: not procs_with(sleeper)),
           "SIGKILL of the server: no process of the command remains")
    report(sup is not None and wait_until(lambda: pid_gone(sup)),
           "SIGKILL of the server: its session's supervisor is gone")
    s.close()

    # --session --cow: the session is copy-on-write; writes stay in it.
    s = Server(root, "--session", "--cow")
    s.initialize()
    cowfile = os.path.join(root, "live-cow-" + tok)
    r = s.call("run_command", {"command": "echo x > %s; cat %s" % (cowfile, cowfile)})
    report(structured(r).get("stdout") == "x\n", "--cow: a write is seen inside (%r)" % text(r)[:200])
    r = s.call("run_command", {"argv": ["cat", cowfile]})
    report(structured(r).get("stdout") == "x\n", "--cow: and by the next command")
    report(not os.path.exists(cowfile), "--cow: but not on the host")
    report(s.close() == 0, "--cow: the server exits 0")

    # Without --session there is no background command.
    s = Server(root)
    s.initialize()
    bgmark = os.path.join(root, "bg-cold-" + tok)
    r = s.call("run_command", {"command": "touch %s" % bgmark, "background": True})
    report(result(r).get("isError") is True or error_code(r) is not None,
           "background without --session is refused (%s)" % (text(r)[:200] or (r or {}).get("error")))
    report(not os.path.exists(bgmark), "and it did not run")
    s.close()

    # --session takes no --env and no other tier.
    for flags in (["--env", "A=1"], ["--tier", "1"]):
        p = subprocess.run([WARD, "mcp", "-w", root, "--session", *flags],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        report(p.returncode == 2, "--session %s is a usage error (%s)" % (" ".join(flags), p.returncode))


def main():
    scenario, root, outside = sys.argv[1], sys.argv[2], sys.argv[3]
    globals()["scenario_" + scenario](os.path.realpath(root), os.path.realpath(outside))


if __name__ == "__main__":
    main()
