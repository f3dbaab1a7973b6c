#!/usr/bin/env bash
# The egress proxy (network.mode "proxy"): allowed names work through the
# HTTP proxy (plain and CONNECT/TLS) and SOCKS5; denied, unlisted, IP-literal,
# wrong-port, Host-mismatch and rebinding-to-loopback requests are refused
# with the documented answer and never reach the servers; audit events are
# written; limits, timeouts and descriptor hygiene hold. Part 1 drives the
# proxy through proxy-harness on loopback; part 2 goes through
# `ward run --net proxy` and checks that nothing gets out around the proxy.
. "$(dirname "$0")/lib.sh"

HARNESS="${WARD_HELPERS:-}/proxy-harness"
[ -x "$HARNESS" ] || skip_all "proxy-harness not built"
command -v curl >/dev/null || skip_all "curl missing"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing"

# socks.py PORT HOST DPORT [CMD] [ATYP] [pipelined]: one SOCKS5 exchange;
# prints the reply code, then (for code 0) sends a line and prints what
# comes back. pipelined: greeting and request in one write, both replies
# read after it (the method reply must still come first).
cat >"$T/socks.py" <<'EOF'
import socket, struct, sys, ipaddress
port, host, dport = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
cmd = int(sys.argv[4]) if len(sys.argv) > 4 else 1
atyp = sys.argv[5] if len(sys.argv) > 5 else "domain"
piped = len(sys.argv) > 6 and sys.argv[6] == "pipelined"
s = socket.create_connection(("127.0.0.1", port), timeout=20)
if not piped:
    s.sendall(b"\x05\x01\x00")
    assert s.recv(2) == b"\x05\x00"
if atyp == "domain":
    addr = b"\x03" + bytes([len(host)]) + host.encode()
elif atyp == "ipv4":
    addr = b"\x01" + ipaddress.IPv4Address(host).packed
else:
    addr = b"\x04" + ipaddress.IPv6Address(host).packed
req = b"\x05" + bytes([cmd]) + b"\x00" + addr + struct.pack(">H", dport)
if piped:
    s.sendall(b"\x05\x01\x00" + req)
    got = b""
    while len(got) < 2:
        b = s.recv(2 - len(got))
        if not b:
            break
        got += b
    if got != b"\x05\x00":
        print("bad method reply", got)
        sys.exit(0)
else:
    s.sendall(req)
rep = b""
while len(rep) < 10:
    b = s.recv(10 - len(rep))
    if not b:
        break
    rep += b
print(rep[1] if len(rep) >= 2 else "closed")
if len(rep) >= 2 and rep[1] == 0:
    s.sendall(b"ping-through-socks\n")
    print(s.recv(100).decode().strip())
EOF
# raw.py PORT: send stdin as-is, print the first response line (or "closed").
cat >"$T/raw.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
data = sys.stdin.buffer.read()
if data:
    s.sendall(data)
buf = b""
while b"\n" not in buf:
    b = s.recv(4096)
    if not b:
        break
    buf += b
print(buf.split(b"\r\n")[0].decode() if buf else "closed")
EOF

# --- servers the test owns: HTTP, HTTPS (self-signed), TCP echo ------------
start_http_servers DNS:secure.test

# start_harness NAME ARGS...: run proxy-harness, set NAME_HTTP, NAME_SOCKS, NAME_PID
start_harness() {
	local name=$1 line
	shift
	"$HARNESS" "$@" >"$T/$name.out" 2>"$T/$name.err" &
	at_exit "kill_id TERM $(proc_id "$!")"
	for _ in $(seq 100); do [ -s "$T/$name.out" ] && break; sleep 0.05; done
	line=$(cat "$T/$name.out")
	eval "${name}_HTTP=$(echo "$line" | sed -n 's/.*http=\([0-9]*\).*/\1/p')"
	eval "${name}_SOCKS=$(echo "$line" | sed -n 's/.*socks=\([0-9]*\).*/\1/p')"
	eval "${name}_PID=$(echo "$line" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')"
}

mkdir -p "$T/audit"
HOSTS=(--host site.test=127.0.0.1 --host secure.test=127.0.0.1 --host a.wild.test=127.0.0.1
	--host denied.test=127.0.0.1 --host unlisted.test=127.0.0.1 --host gitonly.test=127.0.0.1
	--host exact.test=127.0.0.1)
start_harness P --audit "$T/audit" "${HOSTS[@]}" \
	--allow "site.test:$HP" --allow "secure.test:$SP" --allow "site.test:$EP" \
	--allow "*.wild.test:$HP" --allow "denied.test:$HP" --deny denied.test \
	--command "git=gitonly.test:$HP"
[ -n "${P_PID:-}" ] || skip_all "proxy-harness did not start: $(cat "$T/P.err")"
HX="http://127.0.0.1:$P_HTTP"
served() { wc -l <"$T/requests.log"; }

# --- allowed ---------------------------------------------------------------
check_eq "HTTP proxy: absolute-URI GET to an allowed name" "hello-ward plain" \
	"$(curl -sS -x "$HX" "http://site.test:$HP/a")"
check_eq "HTTP proxy: CONNECT + TLS to an allowed name (self-signed)" "hello-ward tls" \
	"$(curl -sS --cacert "$T/cert.pem" -x "$HX" "https://secure.test:$SP/b")"
check_eq "HTTP proxy: CONNECT tunnel for plain HTTP (-p)" "hello-ward plain" \
	"$(curl -sS -p -x "$HX" "http://site.test:$HP/c")"
check_eq "SOCKS5 (socks5h): plain HTTP" "hello-ward plain" \
	"$(curl -sS --socks5-hostname "127.0.0.1:$P_SOCKS" "http://site.test:$HP/d")"
check_eq "SOCKS5 (socks5h): TLS" "hello-ward tls" \
	"$(curl -sS --cacert "$T/cert.pem" --socks5-hostname "127.0.0.1:$P_SOCKS" "https://secure.test:$SP/e")"
check_eq "SOCKS5: raw TCP to an allowed name:port (echo)" "$(printf '0\nping-through-socks')" \
	"$(python3 "$T/socks.py" "$P_SOCKS" site.test "$EP")"
check_eq "SOCKS5 pipelined: raw TCP to an allowed name:port (echo)" "$(printf '0\nping-through-socks')" \
	"$(python3 "$T/socks.py" "$P_SOCKS" site.test "$EP" 1 domain pipelined)"
check "the servers saw the allowed requests, with the right Host" \
	grep -q "^plain site.test:$HP /a$" "$T/requests.log"

# --- refused: documented answers, and the servers saw nothing --------------
before=$(served)
out=$(curl -sS -x "$HX" "http://denied.test:$HP/x")
check_eq "denied name: 403 body names host and rule" \
	"ward: blocked denied.test:$HP (denied.test in network.deny)" "$out"
check_eq "denied name: HTTP status 403" "403" \
	"$(curl -s -o /dev/null -w '%{http_code}' -x "$HX" "http://denied.test:$HP/x")"
check_eq "unlisted name: 403 not in network.allow" \
	"ward: blocked unlisted.test:$HP (not in network.allow)" \
	"$(curl -sS -x "$HX" "http://unlisted.test:$HP/x")"
check_eq "IP literal: 403, with the way to the host's loopback" \
	"ward: blocked 127.0.0.1:$HP (not in network.allow; localhost inside the sandbox is the sandbox's own: for the host's 127.0.0.1:$HP use --allow-host-port $HP (network.host_ports))" \
	"$(curl -sS -x "$HX" "http://127.0.0.1:$HP/x")"
check_eq "IPv6 literal: 403" "ward: blocked [::1]:$HP (not in network.allow)" \
	"$(curl -sS -x "$HX" "http://[::1]:$HP/x")"
check_eq "wrong port: 403" "ward: blocked site.test:$SP (not in network.allow)" \
	"$(curl -sS -x "$HX" "http://site.test:$SP/x")"
check_eq "CONNECT to a wrong port: 403" "403" \
	"$(curl -s -o /dev/null -w '%{http_connect}' -p -x "$HX" "http://site.test:$SP/x")"
check_eq "Host header / target mismatch: 403" \
	"ward: blocked site.test:$HP (Host header does not match the request target)" \
	"$(curl -sS -x "$HX" -H "Host: unlisted.test:$HP" "http://site.test:$HP/x")"
check_eq "wildcard name resolving to 127.0.0.1 without an exact allow: 403" \
	"ward: blocked a.wild.test:$HP (resolves to loopback address 127.0.0.1; needs an exact network.allow entry)" \
	"$(curl -sS -x "$HX" "http://a.wild.test:$HP/x")"
check_eq "network.commands lists are not in the policy's list" \
	"ward: blocked gitonly.test:$HP (not in network.allow)" \
	"$(curl -sS -x "$HX" "http://gitonly.test:$HP/x")"
check_eq "SOCKS5: denied name -> 0x02 (not allowed by ruleset)" 2 \
	"$(python3 "$T/socks.py" "$P_SOCKS" denied.test "$HP")"
check_eq "SOCKS5: IPv4 target -> 0x02" 2 "$(python3 "$T/socks.py" "$P_SOCKS" 127.0.0.1 "$HP" 1 ipv4)"
check_eq "SOCKS5: IPv6 target -> 0x02" 2 "$(python3 "$T/socks.py" "$P_SOCKS" ::1 "$HP" 1 ipv6)"
check_eq "SOCKS5: name resolving to loopback -> 0x02" 2 "$(python3 "$T/socks.py" "$P_SOCKS" a.wild.test "$HP")"
check_eq "SOCKS5: BIND -> 0x07" 7 "$(python3 "$T/socks.py" "$P_SOCKS" site.test "$HP" 2)"
check_eq "SOCKS5: UDP ASSOCIATE -> 0x07" 7 "$(python3 "$T/socks.py" "$P_SOCKS" site.test "$HP" 3)"
# A client that sends its request with the greeting gets both replies in
# one write: the decision is the same, the method reply still first.
check_eq "SOCKS5 pipelined: denied name -> 0x02" 2 \
	"$(python3 "$T/socks.py" "$P_SOCKS" denied.test "$HP" 1 domain pipelined)"
check_eq "SOCKS5 pipelined: IPv4 target -> 0x02" 2 \
	"$(python3 "$T/socks.py" "$P_SOCKS" 127.0.0.1 "$HP" 1 ipv4 pipelined)"
check_eq "SOCKS5 pipelined: name resolving to loopback -> 0x02" 2 \
	"$(python3 "$T/socks.py" "$P_SOCKS" a.wild.test "$HP" 1 domain pipelined)"
check_eq "SOCKS5 pipelined: BIND -> 0x07" 7 "$(python3 "$T/socks.py" "$P_SOCKS" site.test "$HP" 2 domain pipelined)"
check_eq "the servers saw none of the refused requests" "$before" "$(served)"

# --- malformed and oversized heads -----------------------------------------
check_eq "malformed request: 400" "HTTP/1.1 400 Bad Request" \
	"$(printf 'GET http://a@site.test/ HTTP/1.1\r\n\r\n' | python3 "$T/raw.py" "$P_HTTP")"
check_eq "origin-form request to the proxy: 400" "HTTP/1.1 400 Bad Request" \
	"$(printf 'GET / HTTP/1.1\r\nHost: site.test\r\n\r\n' | python3 "$T/raw.py" "$P_HTTP")"
check_eq "head over 16 KiB: 431" "HTTP/1.1 431 Request Header Fields Too Large" \
	"$(python3 -c "import sys; sys.stdout.write('GET http://site.test:$HP/ HTTP/1.1\r\nX: ' + 'a'*20000)" |
		python3 "$T/raw.py" "$P_HTTP")"

# --- network.commands: the program's own list ------------------------------
start_harness G --program /usr/bin/git "${HOSTS[@]}" --allow "site.test:$HP" --command "git=gitonly.test:$HP"
check_eq "network.commands: git reaches its own host" "hello-ward plain" \
	"$(curl -sS -x "http://127.0.0.1:$G_HTTP" "http://gitonly.test:$HP/g")"
check_eq "network.commands: git's list replaces network.allow" \
	"ward: blocked site.test:$HP (not in network.commands.git)" \
	"$(curl -sS -x "http://127.0.0.1:$G_HTTP" "http://site.test:$HP/g")"

# --- exact allow for a name pinned to loopback -----------------------------
start_harness X "${HOSTS[@]}" --allow "exact.test:$HP" --allow exact.test:1 --header-timeout-ms 500 --max 2 \
	--allow "localhost:$HP" --allow "nonexistent.invalid:$HP"
xbase=$(ls "/proc/$X_PID/fd" | wc -l)
# Not pinned: resolved by c-ares on the loop (localhost from /etc/hosts; if
# it also gives ::1, where nothing listens, the next address is tried).
check_eq "a name resolved through c-ares, allowed exactly, reaches loopback" "hello-ward plain" \
	"$(curl -sS -x "http://127.0.0.1:$X_HTTP" "http://localhost:$HP/r")"
check "an unresolvable name: 502/504 naming the resolver's answer" \
	grep -q "^ward: cannot reach nonexistent.invalid:$HP (resolve: " \
	<<<"$(curl -sS -x "http://127.0.0.1:$X_HTTP" "http://nonexistent.invalid:$HP/r")"
check_eq "connection refused upstream: 502" "502" \
	"$(curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$X_HTTP" "http://exact.test:1/x")"
check_eq "an exact allow entry lets a pinned name reach loopback" "hello-ward plain" \
	"$(curl -sS -x "http://127.0.0.1:$X_HTTP" "http://exact.test:$HP/x")"
check_eq "slow head: cut with 408 after the header timeout" "HTTP/1.1 408 Request Timeout" \
	"$(printf 'GET http://exact.test/ HTTP/1.1\r\nX: slow' | python3 "$T/raw.py" "$X_HTTP")"

# Connection limit (2): hold two tunnels open, the third is answered 503.
for _ in $(seq 100); do [ "$(ls "/proc/$X_PID/fd" | wc -l)" -le "$xbase" ] && break; sleep 0.1; done
exec 7<>"/dev/tcp/127.0.0.1/$X_HTTP" 8<>"/dev/tcp/127.0.0.1/$X_HTTP"
printf 'CONNECT exact.test:%s HTTP/1.1\r\n\r\n' "$HP" >&7
printf 'CONNECT exact.test:%s HTTP/1.1\r\n\r\n' "$HP" >&8
read -r l7 <&7
read -r l8 <&8
check_eq "limit: first tunnels are established" "HTTP/1.1 200 Connection established" "${l7%$'\r'}"
check_eq "limit: second tunnel is established" "HTTP/1.1 200 Connection established" "${l8%$'\r'}"
check_eq "limit: over the limit the HTTP port answers 503" "HTTP/1.1 503 Service Unavailable" \
	"$(printf 'CONNECT exact.test:%s HTTP/1.1\r\n\r\n' "$HP" | python3 "$T/raw.py" "$X_HTTP")"
check_eq "limit: over the limit SOCKS5 answers general failure (0x01)" 1 \
	"$(python3 "$T/socks.py" "$X_SOCKS" exact.test "$HP")"
exec 7>&- 8>&-

# --- descriptors: thousands of connections leak nothing --------------------
nfd() { ls "/proc/$1/fd" | wc -l; }
settle() { # wait until the proxy's fd count stops changing at the baseline
	for _ in $(seq 100); do [ "$(nfd "$1")" -le "$2" ] && break; sleep 0.1; done
	nfd "$1"
}
base=$(nfd "$P_PID")
python3 - "$P_HTTP" "$P_SOCKS" "$HP" "$EP" <<'EOF'
import socket, sys, struct
hp, sp, port, ep = (int(x) for x in sys.argv[1:])
def http(req):
    s = socket.create_connection(("127.0.0.1", hp)); s.sendall(req)
    while s.recv(65536): pass
    s.close()
for i in range(700):
    http(b"GET http://site.test:%d/ HTTP/1.1\r\nHost: site.test:%d\r\n\r\n" % (port, port))
    http(b"GET http://unlisted.test:%d/ HTTP/1.1\r\n\r\n" % port)
    s = socket.create_connection(("127.0.0.1", sp))
    s.sendall(b"\x05\x01\x00\x05\x01\x00\x03\x09site.test" + struct.pack(">H", ep))
    got = b""
    while len(got) < 12: got += s.recv(12 - len(got))
    s.sendall(b"x"); s.recv(1); s.close()
    socket.create_connection(("127.0.0.1", hp)).close()  # no request at all
EOF
check_eq "no fd leak after 2800 connections (allowed, refused, socks, empty)" "$base" "$(settle "$P_PID" "$base")"

# --- audit events -----------------------------------------------------------
A="$T/audit/audit.jsonl"
check "audit: allow event for the absolute-URI GET" python3 - "$A" "$HP" <<'EOF'
import json, sys
port = int(sys.argv[2])
ev = [json.loads(l) for l in open(sys.argv[1])]
ok = [e for e in ev if e["event"] == "net" and e["kind"] == "http" and e["host"] == "site.test"
      and e["port"] == port and e["verdict"] == "allow" and e["rule"] == "site.test:%d" % port
      and e["address"] == "127.0.0.1" and e["bytes_up"] > 0 and e["bytes_down"] > 0
      and e["duration_ms"] >= 0 and e["list"] == "network.allow"]
sys.exit(0 if ok else 1)
EOF
check "audit: http-connect and socks5 events with bytes both ways" python3 - "$A" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
kinds = {e["kind"] for e in ev if e["verdict"] == "allow" and e["bytes_up"] > 0 and e["bytes_down"] > 0}
sys.exit(0 if {"http-connect", "socks5", "http"} <= kinds else 1)
EOF
check "audit: deny events carry the deciding rule" python3 - "$A" <<'EOF'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
d = [e for e in ev if e["host"] == "denied.test" and e["verdict"] == "deny"]
u = [e for e in ev if e["host"] == "unlisted.test" and e["verdict"] == "deny" and e["rule"] == "not in network.allow"]
w = [e for e in ev if e["host"] == "a.wild.test" and e["verdict"] == "deny" and "loopback" in e["rule"]
     and e["address"] == "127.0.0.1"]
sys.exit(0 if d and d[0]["rule"] == "denied.test" and d[0]["list"] == "network.deny" and u and w else 1)
EOF

# --- the proxy process: SIGTERM, PDEATHSIG, what it holds -------------------
start_harness S --spawn "${HOSTS[@]}" --allow "site.test:$HP" --audit "$T/audit"
check_eq "spawned proxy works" "hello-ward plain" "$(curl -sS -x "http://127.0.0.1:$S_HTTP" "http://site.test:$HP/s")"
check "spawned proxy: stdin/stdout/stderr are /dev/null" \
	test "$(readlink "/proc/$S_PID/fd/0")$(readlink "/proc/$S_PID/fd/1")$(readlink "/proc/$S_PID/fd/2")" = /dev/null/dev/null/dev/null
check_not "spawned proxy holds no descriptor of the test's files but the audit log" \
	bash -c "ls -l /proc/$S_PID/fd | grep -v -e /dev/null -e audit.jsonl -e socket: -e anon_inode: | grep -q -- '->'"
harness_pid=$(ps -o ppid= -p "$S_PID" | tr -d ' ')
kill -KILL "$harness_pid"
for _ in $(seq 50); do [ -d "/proc/$S_PID" ] || break; sleep 0.1; done
check_not "spawned proxy dies with its parent (PR_SET_PDEATHSIG)" test -d "/proc/$S_PID"

# Idle tunnels are closed (1 s here instead of 300 s).
start_harness I --idle-timeout-ms 1000 --host site.test=127.0.0.1 --allow "site.test:$EP"
cat >"$T/idle.py" <<'EOF'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=60)
s.sendall(b"\x05\x01\x00\x05\x01\x00\x03\x09site.test" + struct.pack(">H", int(sys.argv[2])))
rep = b""
while len(rep) < 12:
    rep += s.recv(12 - len(rep))
print(rep[3])
s.sendall(b"ping-through-socks\n")
print(s.recv(100).decode().strip())
print("closed" if s.recv(100) == b"" else "data")
EOF
check_eq "an idle tunnel is closed by the proxy after the idle timeout" \
	"$(printf '0\nping-through-socks\nclosed')" "$(python3 "$T/idle.py" "$I_SOCKS" "$EP")"

kill -TERM "$X_PID"
wait "$X_PID"
check_eq "SIGTERM: proxy_serve returns and the harness exits 0" 0 "$?"

# --- SSH over SOCKS5 (netcat-openbsd ProxyCommand, as in docs/network.md) --
if nc -h 2>&1 | grep -q -- '-X proxy_protocol'; then
	out=$(printf 'ping-through-socks\n' | timeout 20 nc -N -X 5 -x "127.0.0.1:$P_SOCKS" site.test "$EP" 2>&1)
	check_eq "nc -X 5 -x (the ssh ProxyCommand) tunnels to an allowed host" "ping-through-socks" "$out"
else
	ok_skip "netcat-openbsd missing"
fi

# --- ssh and git over ssh through SOCKS5, against an sshd on loopback -------
SSHP=""
if [ -x /usr/sbin/sshd ] && command -v ssh >/dev/null && command -v git >/dev/null &&
	nc -h 2>&1 | grep -q -- '-X proxy_protocol'; then
	# sshd as root wants its privilege separation directory, which the
	# openssh-server service would create; as any other user it needs none.
	[ "$(id -u)" -ne 0 ] || mkdir -p /run/sshd
	mkdir -p "$T/ssh"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/hk"
	ssh-keygen -q -t ed25519 -N '' -f "$T/ssh/ck"
	cp "$T/ssh/ck.pub" "$T/ssh/authorized_keys"
	SSHP=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	cat >"$T/ssh/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $SSHP
HostKey $T/ssh/hk
AuthorizedKeysFile $T/ssh/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
PidFile $T/ssh/sshd.pid
EOF
	/usr/sbin/sshd -D -e -f "$T/ssh/sshd_config" 2>"$T/ssh/sshd.log" &
	at_exit "kill_id TERM $(proc_id "$!")"
	for _ in $(seq 50); do grep -q "Server listening" "$T/ssh/sshd.log" && break; sleep 0.1; done
	git init -q --bare "$T/repo.git"
	git init -q "$T/work"
	git -C "$T/work" -c user.name=t -c user.email=t@t commit -q --allow-empty -m one
	git -C "$T/work" push -q "$T/repo.git" HEAD:refs/heads/main
	start_harness SSH --host sshd.test=127.0.0.1 --allow "sshd.test:$SSHP"
	SSHO=(-i "$T/ssh/ck" -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR)
	out=$(timeout 60 ssh "${SSHO[@]}" -p "$SSHP" -o ProxyCommand="nc -X 5 -x 127.0.0.1:$SSH_SOCKS %h %p" \
		"$(id -un)@sshd.test" echo ssh-through-socks 2>&1)
	check_eq "ssh through SOCKS5 (ProxyCommand nc -X 5) to an allowed host:port" "ssh-through-socks" "$out"
	out=$(GIT_SSH_COMMAND="ssh ${SSHO[*]} -o ProxyCommand=\"nc -X 5 -x 127.0.0.1:$SSH_SOCKS %h %p\"" \
		timeout 60 git ls-remote "ssh://$(id -un)@sshd.test:$SSHP$T/repo.git" 2>&1)
	check "git ls-remote over ssh through SOCKS5 (GIT_SSH_COMMAND from docs/network.md)" \
		grep -q "refs/heads/main" <<<"$out"
	check_not "ssh through SOCKS5 to a host:port not allowed fails" \
		timeout 60 ssh "${SSHO[@]}" -p "$SSHP" -o ProxyCommand="nc -X 5 -x 127.0.0.1:$P_SOCKS %h %p" \
		"$(id -un)@sshd.test" true
else
	ok_skip "sshd, ssh, git or netcat-openbsd missing"
fi

# === part 2: through the real CLI, `ward run` with network.mode proxy =======
if ! wout=$("$WARD" run --net proxy -- /bin/true 2>&1); then
	if [ -n "${WARD_MUST_WORK:-}" ]; then
		not_ok "ward run --net proxy works here: $wout"
	else
		ok_skip "ward run --net proxy does not work here: $wout"
	fi
	done_testing
	exit
fi
export PATH=/usr/local/bin:/usr/bin:/bin
HOSTIP=$(hostname -I 2>/dev/null | awk '{print $1}')
# Host-side sentinels on every address: a TCP listener and a UDP socket
# (which doubles as a DNS server) that log whatever reaches them.
cat >"$T/sentinel.py" <<'EOF'
import socket, sys, threading
d = sys.argv[1]
log = open(d + "/sentinel.log", "a", buffering=1)
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("0.0.0.0", 0)); t.listen(16)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("0.0.0.0", 0))
def tcp():
    while True:
        c, a = t.accept(); log.write("tcp %s\n" % (a,)); c.close()
def udp():
    while True:
        b, a = u.recvfrom(4096); log.write("udp %s %r\n" % (a, b[:16]))
threading.Thread(target=tcp, daemon=True).start()
threading.Thread(target=udp, daemon=True).start()
open(d + "/sentinel.tmp", "w").write("%d %d\n" % (t.getsockname()[1], u.getsockname()[1]))
import os; os.rename(d + "/sentinel.tmp", d + "/sentinel")
threading.Event().wait()
EOF
python3 "$T/sentinel.py" "$T" &
at_exit "kill_id TERM $(proc_id "$!")"
for _ in $(seq 100); do [ -e "$T/sentinel" ] && break; sleep 0.1; done
read -r TPORT UPORT <"$T/sentinel"
touch "$T/sentinel.log"
cp "$T/cert.pem" "$T/socks.py" "$WS/"
cat >"$T/pol.json" <<EOF
{ "version": 1,
  "network": { "mode": "proxy",
    "allow": ["site.test:$HP", "secure.test:$SP", "*.wild.test:$HP", "denied.test:$HP"],
    "deny": ["denied.test"],
    "hosts": { "site.test": "127.0.0.1", "secure.test": "127.0.0.1", "a.wild.test": "127.0.0.1",
               "denied.test": "127.0.0.1", "unlisted.test": "127.0.0.1", "gitonly.test": "127.0.0.1",
               "sshd.test": "127.0.0.1" },
    "commands": { "git": ["gitonly.test:$HP", "sshd.test:${SSHP:-22}"] } } }
EOF
sed 's/"mode": "proxy",/"mode": "proxy", "capture": false,/' "$T/pol.json" >"$T/pol-nocap.json"
W=("$WARD" run -p "$T/pol.json" --)
# The command's output without ward's end-of-run summary of refusals
# (checked on its own below).
wr() { "${W[@]}" "$@" 2>&1 | grep -v '^ward: the proxy refused'; }
check_eq "ward run: proxy variables point at the in-sandbox ports" \
	"http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:1080 localhost,127.0.0.1,::1" \
	"$("${W[@]}" sh -c 'echo $HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY')"
check_eq "ward run: curl through HTTP_PROXY to an allowed name" "hello-ward plain" \
	"$(wr curl -sS "http://site.test:$HP/w1")"
check_eq "ward run: curl through HTTPS_PROXY (CONNECT + TLS)" "hello-ward tls" \
	"$(wr curl -sS --cacert cert.pem "https://secure.test:$SP/w2")"
check_eq "ward run: curl --socks5-hostname through the SOCKS5 port" "hello-ward plain" \
	"$(wr curl -sS --socks5-hostname 127.0.0.1:1080 "http://site.test:$HP/w3")"
check "ward run: the host servers saw the allowed requests" \
	bash -c "grep -q '^plain site.test:$HP /w1$' '$T/requests.log' && grep -q '^tls secure.test:$SP /w2$' '$T/requests.log'"
before=$(served)
check_eq "ward run: denied name refused with the documented answer" \
	"ward: blocked denied.test:$HP (denied.test in network.deny)" \
	"$(wr curl -sS "http://denied.test:$HP/x")"
check_eq "ward run: unlisted name refused" "ward: blocked unlisted.test:$HP (not in network.allow)" \
	"$(wr curl -sS "http://unlisted.test:$HP/x")"
check_eq "ward run: IP literal through the proxy refused" \
	"ward: blocked 127.0.0.1:$HP (not in network.allow; localhost inside the sandbox is the sandbox's own: for the host's 127.0.0.1:$HP use --allow-host-port $HP (network.host_ports))" \
	"$(wr curl -sS --noproxy '' -x http://127.0.0.1:3128 "http://127.0.0.1:$HP/x")"
check_eq "ward run: wrong port refused" "ward: blocked site.test:$SP (not in network.allow)" \
	"$(wr curl -sS "http://site.test:$SP/x")"
check_eq "ward run: Host mismatch refused" \
	"ward: blocked site.test:$HP (Host header does not match the request target)" \
	"$(wr curl -sS -H "Host: unlisted.test:$HP" "http://site.test:$HP/x")"
check_eq "ward run: a name resolving to 127.0.0.1 without an exact allow is refused" \
	"ward: blocked a.wild.test:$HP (resolves to loopback address 127.0.0.1; needs an exact network.allow entry)" \
	"$(wr curl -sS "http://a.wild.test:$HP/x")"
check_eq "ward run: SOCKS5 refusal is 0x02" 2 "$(wr python3 socks.py 1080 unlisted.test "$HP")"
check_not "ward run: direct connect to the host's 127.0.0.1 server (ignoring the proxy) fails" \
	"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$HP/direct"
if [ -n "$HOSTIP" ]; then
	check_not "ward run: direct TCP connect to the host address $HOSTIP fails" \
		"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://$HOSTIP:$TPORT/direct"
	# With transparent capture every address is the namespace's own
	# (docs/network.md): the send succeeds and the datagram stays inside;
	# the sentinel check below is the one that counts.
	"${W[@]}" python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'ward-udp', ('$HOSTIP', $UPORT))" >/dev/null 2>&1
	check_not "ward run: a UDP datagram to the host address fails with capture off" \
		"$WARD" run -p "$T/pol-nocap.json" -- python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'ward-udp', ('$HOSTIP', $UPORT))"
	check_not "ward run: a DNS query to a resolver on the host address fails" \
		"${W[@]}" python3 -c "
import socket, struct
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0) + b'\x07example\x03com\x00' + struct.pack('>HH', 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, ('$HOSTIP', $UPORT)); s.recv(512)"
else
	ok_skip "no non-loopback host address for the direct/UDP/DNS checks"
fi
check_not "ward run: the system resolver gets no answer inside" \
	"${W[@]}" python3 -c "import socket; socket.getaddrinfo('example.com', 443)"
"${W[@]}" python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'ward-udp-lo', ('127.0.0.1', $UPORT))" >/dev/null 2>&1
check_eq "ward run: the host servers saw none of the refused or direct attempts" "$before" "$(served)"
check_eq "ward run: the host sentinels (TCP, UDP/DNS) saw nothing" "" "$(cat "$T/sentinel.log")"
# One line at the end of the run names every refused host:port and why,
# once each, even when the command itself says nothing (curl -s, 403).
out=$("${W[@]}" sh -c "curl -s -o /dev/null http://unlisted.test:$HP/a; curl -s -o /dev/null http://unlisted.test:$HP/b; curl -s -o /dev/null http://denied.test:$HP/c" 2>&1 >/dev/null)
check_eq "ward run: one summary line of the proxy's refusals on stderr" 1 \
	"$(grep -c '^ward: the proxy refused 2 destinations: unlisted.test:'"$HP"' (not in network.allow), denied.test:'"$HP"' (denied.test in network.deny); every connection is in .*audit.jsonl (session [0-9a-f]*)$' <<<"$out")"
check "ward run: the exit event lists the refusals" \
	grep -q '"net_refused":\[{"host":"unlisted.test","port":'"$HP"',"reason":"not in network.allow"},{"host":"denied.test"' \
	<<<"$(grep '"event":"exit"' "$XDG_STATE_HOME/ward/audit.jsonl" | tail -1)"
check_eq "ward run: no summary line when nothing was refused" "" \
	"$("${W[@]}" curl -s -o /dev/null "http://site.test:$HP/ok" 2>&1)"
cp "$(command -v curl)" "$WS/git"
check_eq "ward run: network.commands gives git its own list" \
	"ward: blocked site.test:$HP (not in network.commands.git)" \
	"$(wr ./git -sS "http://site.test:$HP/x")"
check_eq "ward run: ... and git reaches its own host" "hello-ward plain" \
	"$(wr ./git -sS "http://gitonly.test:$HP/g")"
rm -f "$WS/git"
# network.max_connections from the policy file reaches the proxy.
cat >"$T/pol-max.json" <<EOF
{ "version": 1, "network": { "mode": "proxy", "allow": ["site.test:$EP", "site.test:$HP"],
  "hosts": { "site.test": "127.0.0.1" }, "max_connections": 1 } }
EOF
cat >"$WS/max.sh" <<EOF
exec 3<>/dev/tcp/127.0.0.1/3128
printf 'CONNECT site.test:$EP HTTP/1.1\r\n\r\n' >&3
read -r l <&3
echo "\$l"
curl -s -o /dev/null -w '%{http_code}\n' http://site.test:$HP/m
EOF
check_eq "ward run: network.max_connections 1: one tunnel, the next request 503" \
	"$(printf 'HTTP/1.1 200 Connection established\n503')" \
	"$("$WARD" run -p "$T/pol-max.json" -- bash max.sh 2>&1 | tr -d '\r')"
rm -f "$WS/max.sh"
if [ -n "$SSHP" ]; then
	cp "$T/ssh/ck" "$WS/ck"
	chmod 600 "$WS/ck"
	out=$("$WARD" run -p "$T/pol.json" --env "GIT_SSH_COMMAND=ssh -i $WS/ck -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ProxyCommand=\"nc -X 5 -x 127.0.0.1:1080 %h %p\"" \
		-- git -C /tmp ls-remote "ssh://$(id -un)@sshd.test:$SSHP$T/repo.git" 2>&1)
	# (-C /tmp: the workspace is not a repository)
	check "ward run: git over ssh through the SOCKS5 port (network.commands.git)" grep -q "refs/heads/main" <<<"$out"
	rm -f "$WS/ck"
else
	ok_skip "no sshd for git over ssh"
fi
check "ward run: net audit events in the state dir's audit log" \
	python3 - "$XDG_STATE_HOME/ward/audit.jsonl" "$HP" <<'EOF'
import json, sys
port = int(sys.argv[2])
ev = [json.loads(l) for l in open(sys.argv[1])]
net = [e for e in ev if e.get("event") == "net"]
a = [e for e in net if e["host"] == "site.test" and e["port"] == port and e["verdict"] == "allow"
     and e["kind"] == "http" and e["address"] == "127.0.0.1" and e["bytes_down"] > 0 and e.get("program") == "curl"]
t = [e for e in net if e["host"] == "secure.test" and e["kind"] == "http-connect" and e["verdict"] == "allow"]
s = [e for e in net if e["kind"] == "socks5" and e["verdict"] == "allow"]
d = [e for e in net if e["host"] == "denied.test" and e["verdict"] == "deny" and e["rule"] == "denied.test"]
g = [e for e in net if e["host"] == "site.test" and e.get("program") == "git" and e["verdict"] == "deny"
     and e["rule"] == "not in network.commands.git"]
sys.exit(0 if a and t and s and d and g and all("session" in e for e in net) else 1)
EOF

done_testing
