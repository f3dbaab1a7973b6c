#!/usr/bin/env bash
# ward.exe's egress proxy under Wine (docs/windows.md "The proxy"). Wine
# uses the host's sockets, so the test drives the proxy from Linux: a
# loopback upstream server started here logs every request it gets; curl
# and small Python clients talk to the proxy.
#  1. the proxy alone (`ward-test.exe proxy-serve`): an allowed name
#     reaches the server (HTTP forward, CONNECT, SOCKS5) and is audited
#     allow; a denied name is refused (403 / SOCKS5 0x02), audited deny,
#     and the server saw nothing; malformed CONNECT lines, an oversized
#     head, a slow head and a flood over the connection limit are answered
#     and counted, nothing crashes, every connection is closed at the end.
#  2. `ward.exe run` with network.mode proxy on W2: every fail-closed path
#     (no WFP engine, walls or exemption that do not read back, no
#     firewallapi.dll) refuses at its step with nothing run; with injected
#     engines the command gets the proxy's variables, reaches an allowed
#     name through it, and a refused name is in the result's net_refused.
# Nothing here shows isolation: Wine enforces no AppContainer or WFP.
#
# Needs WARD_WIN_BIN (ward.exe, ward-test.exe, win-child.exe); skips when
# Wine cannot start.
set -u
# shellcheck source=tests/windows/wine-common.sh
. "$(dirname "$0")/wine-common.sh"
command -v curl >/dev/null || skip_all "curl is not installed"
command -v python3 >/dev/null || skip_all "python3 is not installed"
wine_setup proxy ward-test.exe
proxy_pid=
cleanup() {
	[ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
	exec 7>&- 2>/dev/null
	wine_cleanup
}
trap cleanup EXIT

echo "1..22"

# The upstream: logs the request line of every connection it gets.
upstream_start "$T/server.log"

cat >"$T/policy.json" <<EOF
{"network": {"mode": "proxy", "allow": ["allowed.test:$SP"],
             "hosts": {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}}}
EOF
mkdir -p "$T/audit"
mkfifo "$T/stdin"
# proxy-serve POLICY AUDIT_DIR MAX_CONNECTIONS HEADER_MS; it serves until
# its stdin ends (fd 7 here).
wine "$bin/ward-test.exe" proxy-serve "$(winpath "$T/policy.json")" "$(winpath "$T/audit")" 8 3000 \
	<"$T/stdin" >"$T/proxy.out" 2>"$T/proxy.err" &
proxy_pid=$!
exec 7>"$T/stdin"
for _ in $(seq 300); do grep -q '^port' "$T/proxy.out" 2>/dev/null && break; sleep 0.1; done
PP=$(strip_cr <"$T/proxy.out" | awk '/^port/ { print $2 }')
if [ -z "$PP" ]; then
	show "$T/proxy.err"
	echo "Bail out! the proxy did not start"
	exit 1
fi
px=http://127.0.0.1:$PP
audit=$T/audit/audit.jsonl
lines() { wc -l <"$T/server.log"; }

# 1: allowed, three ways.
a=$(curl -sS -m 20 -x "$px" "http://allowed.test:$SP/forward" 2>&1)
b=$(curl -sS -m 20 -p -x "$px" "http://allowed.test:$SP/connect" 2>&1)
c=$(curl -sS -m 20 --socks5-hostname "127.0.0.1:$PP" "http://allowed.test:$SP/socks" 2>&1)
if [ "$a" = upstream-ok ] && [ "$b" = upstream-ok ] && [ "$c" = upstream-ok ] &&
	grep -qx 'GET /forward HTTP/1.1' "$T/server.log" && grep -qx 'GET /connect HTTP/1.1' "$T/server.log" &&
	grep -qx 'GET /socks HTTP/1.1' "$T/server.log"; then
	ok "an allowed name reaches the server through HTTP forward, CONNECT and SOCKS5, and the server logged each"
else
	not_ok "allowed name: forward '$a', connect '$b', socks '$c'"
	show "$T/server.log"
fi
if python3 - "$audit" "$SP" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if '"net"' in l]
kinds = {e["kind"] for e in ev if e["event"] == "net" and e["host"] == "allowed.test"
         and e["port"] == int(sys.argv[2]) and e["verdict"] == "allow"
         and e["rule"] == "allowed.test:" + sys.argv[2] and e["list"] == "network.allow"
         and e["address"] == "127.0.0.1" and e["bytes_down"] > 0}
sys.exit(0 if kinds == {"http", "http-connect", "socks5"} else 1)
EOF
then
	ok "each allowed connection has Linux's net audit event (kind, host, port, address, verdict allow, rule, list, bytes)"
else
	not_ok "the allowed connections' audit events"
	show "$audit"
fi

# 2: denied, both protocols: refused, audited, the server saw nothing.
before=$(lines)
d=$(curl -sS -m 20 -x "$px" -o "$T/denied.body" -w '%{http_code}' "http://denied.test:$SP/nope" 2>&1)
curl -sS -m 20 --socks5-hostname "127.0.0.1:$PP" "http://denied.test:$SP/nope2" >"$T/socks.err" 2>&1
src=$?
e=$(curl -sS -m 20 -p -x "$px" "http://denied.test:$SP/nope3" 2>&1)
if [ "$d" = 403 ] && grep -q "ward: blocked denied.test:$SP (not in network.allow)" "$T/denied.body" &&
	[ $src -ne 0 ] && grep -q 'denied.test' "$T/socks.err" && [ -n "$e" ] && [ "$e" != upstream-ok ]; then
	ok "a denied name is refused: HTTP 403 naming the rule, CONNECT refused, SOCKS5 refused"
else
	not_ok "denied name: http '$d', socks exit $src, connect '$e'"
fi
if [ "$(lines)" -eq "$before" ] && ! grep -q nope "$T/server.log"; then
	ok "the server saw nothing of the denied requests"
else
	not_ok "the server got a denied request"
	show "$T/server.log"
fi
if python3 - "$audit" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
den = [e for e in ev if e.get("event") == "net" and e["host"] == "denied.test"]
sys.exit(0 if len(den) == 3 and all(e["verdict"] == "deny" and e["rule"] == "not in network.allow"
                                     and e["bytes_up"] == 0 for e in den)
         and {e["kind"] for e in den} == {"http", "http-connect", "socks5"} else 1)
EOF
then
	ok "each refusal has a net audit event with verdict deny and the reason"
else
	not_ok "the refusals' audit events"
	show "$audit"
fi

# 3: malformed heads, oversized head, slow head, flood.
cat >"$T/bad.py" <<'EOF'
import socket, sys
port = int(sys.argv[1])
def ask(data, wait=True):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(data)
    out = b""
    try:
        while wait:
            d = s.recv(4096)
            if not d:
                break
            out += d
    except socket.timeout:
        out += b"<timeout>"
    s.close()
    return out.split(b"\r\n")[0].decode(errors="replace")
head_max = int(sys.argv[2])
print(ask(b"CONNECT\r\n\r\n"))
print(ask(b"CONNECT allowed.test\r\n\r\n"))
print(ask(b"CONNECT :80 HTTP/1.1\r\n\r\n"))
print(ask(b"CONNECT a..b:80 HTTP/1.1\r\n\r\n"))
print(ask(b"\x00\xff garbage\r\n\r\n"))
print(ask(b"GET /relative HTTP/1.1\r\nHost: x\r\n\r\n"))
print(ask(b"GET http://allowed.test/ HTTP/1.1\r\nX: " + b"a" * (head_max + 100) + b"\r\n\r\n"))
print(ask(b"\x05\x01\x00\x05\x09\x00\x03\x00\x00\x50"))
print(ask(b"GET http://allowed.test/ HTTP/1.1\r\n"))
EOF
HM=$(strip_cr <"$T/proxy.out" | awk '/^port/ { print $NF }')
python3 "$T/bad.py" "$PP" "$HM" >"$T/bad.out" 2>&1
show "$T/bad.out"
if [ "$(sed -n 1p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ] &&
	[ "$(sed -n 2p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ] &&
	[ "$(sed -n 3p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ] &&
	[ "$(sed -n 4p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ] &&
	[ "$(sed -n 5p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ] &&
	[ "$(sed -n 6p "$T/bad.out")" = 'HTTP/1.1 400 Bad Request' ]; then
	ok "malformed CONNECT lines, a bad target, garbage and an origin-form request: 400 each"
else
	not_ok "malformed requests were not answered 400"
fi
if [ "$(sed -n 7p "$T/bad.out")" = 'HTTP/1.1 431 Request Header Fields Too Large' ]; then
	ok "a head over $HM bytes: 431, nothing buffered past the limit"
else
	not_ok "the oversized head: '$(sed -n 7p "$T/bad.out")'"
fi
if [ "$(sed -n 9p "$T/bad.out")" = 'HTTP/1.1 408 Request Timeout' ]; then
	ok "a head never completed: 408 after the header timeout, the connection closed"
else
	not_ok "the slow head: '$(sed -n 9p "$T/bad.out")'"
fi
if [ "$(lines)" -eq "$before" ]; then
	ok "none of the malformed requests reached the server"
else
	not_ok "a malformed request reached the server"
fi

# The flood: 40 idle connections against a limit of 8. Those the proxy
# serves wait for a head that never comes and are closed after the header
# timeout; those over the limit are answered 503 at once. None is left
# hanging; that at most 8 were served at once is the proxy's own count (its
# "peak", at the stop below), not a guess from timing on a loaded machine.
cat >"$T/flood.py" <<'EOF'
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(40)]
answers = [None] * len(held)
end = time.time() + 40
while None in answers and time.time() < end:
    time.sleep(0.1)
    for i, s in enumerate(held):
        if answers[i] is not None:
            continue
        s.setblocking(False)
        try:
            d = s.recv(4096)
            answers[i] = d.split(b"\r\n")[0].decode(errors="replace") if d else "closed"
        except BlockingIOError:
            pass
        except OSError:
            answers[i] = "error"
for s in held:
    s.close()
print(answers.count("HTTP/1.1 503 Service Unavailable"), answers.count("closed"),
      answers.count(None))
EOF
python3 "$T/flood.py" "$PP" >"$T/flood.out" 2>&1
show "$T/flood.out"
read -r n503 nclosed nnone <"$T/flood.out"
if [ "${n503:-0}" -ge 1 ] && [ $((${n503:-0} + ${nclosed:-0})) -eq 40 ] && [ "${nnone:-1}" -eq 0 ]; then
	ok "a flood of 40 connections against a limit of 8: $n503 over the limit answered 503 at once, $nclosed served and closed at the header timeout, none left hanging"
else
	not_ok "the flood: 503 ${n503:-?}, closed ${nclosed:-?}, left hanging ${nnone:-?}"
fi
a=$(curl -sS -m 20 -x "$px" "http://allowed.test:$SP/after" 2>&1)
if [ "$a" = upstream-ok ] && kill -0 "$proxy_pid" 2>/dev/null; then
	ok "after the malformed requests and the flood the proxy still serves an allowed name"
else
	not_ok "the proxy does not serve after the flood: '$a'"
	show "$T/proxy.err"
fi

exec 7>&-
for _ in $(seq 600); do kill -0 "$proxy_pid" 2>/dev/null || break; sleep 0.1; done
# Still there after a minute: it did not stop, and waiting on does not help.
kill -0 "$proxy_pid" 2>/dev/null && echo "# proxy-serve did not stop within 60 s: killed" &&
	kill -9 "$proxy_pid"
wait "$proxy_pid"
prc=$?
proxy_pid=
show "$T/proxy.out"
if [ $prc -eq 0 ] && strip_cr <"$T/proxy.out" | grep -q '^accepted [0-9]* overflowed [1-9][0-9]* open 0 peak [1-8]$' &&
	strip_cr <"$T/proxy.out" | grep -qx "refused denied.test:$SP not in network.allow"; then
	ok "stopped cleanly: every connection closed (open 0), never more than 8 served at once (peak), overflows counted, the refusal reported once"
else
	not_ok "the proxy did not stop cleanly (exit $prc)"
	show "$T/proxy.err"
fi

# 2. `ward.exe run` with network.mode proxy (W2).
ws=$T/ws
mkdir -p "$ws"
WS=$(winpath "$ws")
cp "$T/policy.json" "$ws/policy.json"
wardt() { WARD_TEST_WIN_FAULT=$FAULT wine "$bin/ward-test.exe" "$@"; }
run_marker() { # CMD ARGS...: the command (win-child) would write a marker
	rm -f "$ws/marker"
	(cd "$ws" && "$@" -p "$WS\\policy.json" -- "$(winpath "$bin/win-child.exe")" write "$WS\\marker") \
		>"$T/out" 2>&1
}
FAULT='' run_marker wardt run --strict
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] &&
	grep -q 'Refusing to run with --strict: degraded protections .*network wall: .*FwpmEngineOpen0: error 1764.*loopback exemption the proxy needs opens every loopback port' "$T/out"; then
	ok "run --strict, proxy mode, no WFP engine: refused before anything runs, the open loopback named"
else
	not_ok "run --strict in proxy mode (exit $rc)"
	show "$T/out"
fi
FAULT='' run_marker wardt run
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] &&
	grep -q '^ward: loopback-exemption: .*NetworkIsolationGetAppContainerConfig' "$T/out"; then
	ok "no firewallapi.dll: refused at loopback-exemption (exit 125), the command never ran"
else
	not_ok "the missing loopback exemption API (exit $rc)"
	show "$T/out"
fi
FAULT=job-echo,wfp-lie run_marker wardt run
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] && grep -q '^ward: network-wall: .*proxy-v4: the filter added is not there' "$T/out"; then
	ok "walls (with the proxy permit) that do not read back: refused at network-wall"
else
	not_ok "walls that do not read back (exit $rc)"
	show "$T/out"
fi
FAULT=job-echo,wfp-echo,lb-lie run_marker wardt run
rc=$?
state=$(echo "$T"/prefix/drive_c/users/*/AppData/Local/ward)
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] &&
	grep -q '^ward: loopback-exemption: .*does not hold the run.s SID' "$T/out" &&
	! grep -q '^loopback' "$state/network.journal" 2>/dev/null; then
	ok "an exemption that does not read back: refused at loopback-exemption, its journal line taken back"
else
	not_ok "an exemption that does not read back (exit $rc)"
	show "$T/out"
	[ -f "$state/network.journal" ] && show "$state/network.journal"
fi
(cd "$ws" && FAULT=job-echo,wfp-echo wardt run --dry-run -p "$WS\\policy.json" -- cmd /c exit 0) >"$T/out" 2>&1
if grep -q '^wfp-walls 12 filters on S-1-15-2-' "$T/out" && strip_cr <"$T/out" | grep -q '^network-class proxy proxy 127.0.0.1:[0-9]* loopback-exempt$' &&
	grep -q '^env HTTP_PROXY' "$T/out" && ! grep -q '^capability' "$T/out"; then
	ok "dry run: 12 filters (the proxy permits too), class proxy with the exemption, no capability, the proxy variables"
else
	not_ok "the proxy-mode dry run"
	show "$T/out"
fi
# The plumbing end to end: engines that hold what they are given, a
# profile, ACLs and the token echoed, the child started plain (Wine has no
# AppContainer). The command gets the variables, reaches an allowed name
# through the proxy, and a refused one lands in the result.
FAULT=job-echo,wfp-echo,lb-echo,profile-echo,acl-echo,spawn-plain
before=$(lines)
(cd "$ws" && wardt run --result "$WS\\r.json" -p "$WS\\policy.json" -- "$(winpath "$bin/win-child.exe")" \
	env "$WS\\env.txt" + proxy-get "allowed.test:$SP" "$WS\\got.txt" + proxy-get "denied.test:$SP" "$WS\\denied.txt") \
	>"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && strip_cr <"$ws/env.txt" | grep -q '^HTTP_PROXY=http://127.0.0.1:[0-9]*$' &&
	strip_cr <"$ws/env.txt" | grep -q '^HTTPS_PROXY=http://127.0.0.1:[0-9]*$' &&
	strip_cr <"$ws/env.txt" | grep -q '^ALL_PROXY=socks5h://127.0.0.1:[0-9]*$'; then
	ok "the command's environment holds HTTP_PROXY, HTTPS_PROXY and ALL_PROXY for the run's proxy"
else
	not_ok "the proxy variables in the command's environment (exit $rc)"
	show "$T/out"
fi
if grep -q upstream-ok "$ws/got.txt" 2>/dev/null && grep -q '403' "$ws/denied.txt" 2>/dev/null &&
	[ "$(lines)" -eq $((before + 1)) ]; then
	ok "through the run's proxy: the allowed name reached the server, the denied one got 403 and did not"
else
	not_ok "the command's requests through the run's proxy"
	show "$T/out"
fi
if python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); r=j["net_refused"]; sys.exit(0 if len(r)==1 and r[0]["host"]=="denied.test" and r[0]["reason"]=="not in network.allow" else 1)' "$ws/r.json" 2>/dev/null &&
	grep -q 'denied.test' "$T/out" && ! grep -q '^loopback' "$state/network.journal" 2>/dev/null; then
	ok "the result's net_refused names the refused host, the run says so, the exemption is gone afterwards"
else
	not_ok "net_refused in the result"
	[ -f "$ws/r.json" ] && show "$ws/r.json"
	show "$T/out"
fi

# The command class: win-child named in network.commands (outside every
# writable root) holds internetClient, so without the walls it is refused,
# not degraded; with them its own allow list applies in the proxy.
cat >"$ws/commands.json" <<EOF
{"network": {"mode": "proxy", "allow": [], "commands": {"win-child": ["allowed.test:$SP"]},
             "hosts": {"allowed.test": "127.0.0.1"}}}
EOF
child=$(winpath "$bin/win-child.exe")
rm -f "$ws/marker"
(cd "$ws" && FAULT='' wardt run -p "$WS\\commands.json" -- "$child" write "$WS\\marker") >"$T/out" 2>&1
rc=$?
if [ $rc -eq 125 ] && [ ! -e "$ws/marker" ] &&
	grep -q '^ward: .*win-child.exe holds internetClient (network.commands.win-child) and the WFP filters that keep it to the proxy cannot be put up' "$T/out"; then
	ok "a network.commands program without the walls: refused at plan (exit 125), never run degraded"
else
	not_ok "the command class without walls (exit $rc)"
	show "$T/out"
fi
before=$(lines)
rm -f "$ws/got.txt"
(cd "$ws" && wardt run --dry-run -p "$WS\\commands.json" -- "$child" exit 0) >"$T/dry" 2>&1
(cd "$ws" && wardt run -p "$WS\\commands.json" -- "$child" proxy-get "allowed.test:$SP" "$WS\\got.txt") \
	>"$T/out" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q '^capability internetClient' "$T/dry" &&
	strip_cr <"$T/dry" | grep -q '^network-class command proxy 127.0.0.1:[0-9]* loopback-exempt network.commands.win-child$' &&
	grep -q upstream-ok "$ws/got.txt" 2>/dev/null && [ "$(lines)" -eq $((before + 1)) ]; then
	ok "with the walls: the command class holds internetClient and reaches what network.commands.win-child allows (network.allow is empty)"
else
	not_ok "the command class with walls (exit $rc)"
	show "$T/dry"
	show "$T/out"
fi

[ $fails -eq 0 ]
