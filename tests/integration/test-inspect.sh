#!/usr/bin/env bash
# Credentials that never enter the sandbox, TLS inspection with the run's
# own CA, and request rules (network.credentials, network.inspect,
# network.requests, network.upstream_ca). Local servers on the host's
# loopback with a CA this test makes; every "it reached" and "it did not
# reach" is read from the servers' request log on the host.
. "$(dirname "$0")/lib.sh"

command -v curl >/dev/null || skip_all "curl missing"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing"
if ! wout=$("$WARD" run --net proxy -- /bin/true 2>&1); then
	skip_all "ward run --net proxy does not work here: $wout"
fi

# --- a test CA and a server certificate for api.test / other.test --------
C="$T/certs"
mkdir -p "$C"
{
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=ward-test-ca \
		-keyout "$C/ca.key" -out "$C/ca.pem" &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=api.test \
			-keyout "$C/srv.key" -out "$C/srv.csr" &&
		printf 'subjectAltName=DNS:api.test,DNS:other.test,DNS:git.test\n' >"$C/ext" &&
		openssl x509 -req -in "$C/srv.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial -days 2 \
			-extfile "$C/ext" -out "$C/srv.pem"
} >/dev/null 2>&1 || skip_all "openssl cannot make certificates"
chmod 644 "$C"/*

cat >"$T/srv.py" <<'EOF'
import http.server, socketserver, ssl, sys, threading, os
d, c = sys.argv[1], sys.argv[2]
log = open(d + "/requests.log", "a", buffering=1)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        if self.headers.get("Transfer-Encoding") == "chunked":
            while True:
                k = int(self.rfile.readline().split(b";")[0], 16)
                body += self.rfile.read(k)
                self.rfile.readline()
                if k == 0:
                    break
        log.write("%s %s %s auth=%s key=%s body=%s conn=%d\n" % (self.server.name, self.command, self.path,
                  self.headers.get("Authorization"), self.headers.get("X-Api-Key"),
                  body.decode(errors="replace"), self.client_address[1]))
        out = ("ok %s %s\n" % (self.command, self.path)).encode()
        if self.path.startswith("/echo"):
            out = ("echo %s %s\n" % (self.headers.get("Authorization"), self.headers.get("X-Api-Key"))).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)
    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = reply
    def log_message(self, *a):
        pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
tls = S(("127.0.0.1", 0), H); tls.name = "tls"
plain = S(("127.0.0.1", 0), H); plain.name = "plain"
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(c + "/srv.pem", c + "/srv.key")
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
for s in (tls, plain):
    threading.Thread(target=s.serve_forever, daemon=True).start()
open(d + "/ports.tmp", "w").write("%d %d\n" % (tls.server_address[1], plain.server_address[1]))
os.rename(d + "/ports.tmp", d + "/ports")
threading.Event().wait()
EOF
python3 "$T/srv.py" "$T" "$C" 2>"$T/srv.err" &
at_exit "kill_id TERM $(proc_id "$!")"
for _ in $(seq 100); do [ -e "$T/ports" ] && break; sleep 0.1; done
[ -e "$T/ports" ] || skip_all "test servers did not start"
read -r SP HP <"$T/ports"
touch "$T/requests.log"
seen() { grep -c -F -e "$1" "$T/requests.log"; }

# The secret: in ward's own environment (one credential) and in a file
# (another); never in the sandbox.
SECRET="wardsecret-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
FSECRET="wardfilesecret-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
REV=$(printf %s "$SECRET" | python3 -c 'import sys; print(sys.stdin.read()[::-1], end="")')
FREV=$(printf %s "$FSECRET" | python3 -c 'import sys; print(sys.stdin.read()[::-1], end="")')
mkdir -p "$HOME/.secrets"
printf '%s\n' "$FSECRET" >"$HOME/.secrets/key"

cat >"$T/pol.json" <<EOF
{ "version": 1,
  "network": { "mode": "proxy",
    "allow": ["api.test:$SP", "other.test:$SP", "api.test:$HP", "other.test:$HP", "git.test:$SP"],
    "hosts": { "api.test": "127.0.0.1", "other.test": "127.0.0.1", "git.test": "127.0.0.1" },
    "capture_ports": [$SP, $HP],
    "upstream_ca": ["$C/ca.pem"],
    "inspect": ["other.test"],
    "credentials": [
      { "host": "api.test", "env": "API_TOKEN", "from_env": "WARD_TEST_SECRET" },
      { "host": "api.test", "path": "/keyed", "env": "API_KEY", "from_file": "$HOME/.secrets/key",
        "as": "header", "header": "X-Api-Key" },
      { "preset": "git", "host": "git.test", "from_env": "WARD_TEST_SECRET" } ],
    "requests": [
      { "host": "api.test", "methods": "read-only" },
      { "host": "api.test", "methods": ["POST"], "paths": ["/upload"] },
      { "host": "api.test", "action": "deny", "paths": ["/get/private"] } ] },
  "env": { "set": { "REV": "$REV", "FREV": "$FREV" } } }
EOF
export WARD_TEST_SECRET="$SECRET"
W=("$WARD" run -p "$T/pol.json" --)
wr() { "${W[@]}" "$@" 2>&1 | grep -v '^ward: the proxy refused'; }
AU="https://api.test:$SP"

# --- the secret never enters the sandbox ----------------------------------
check_eq "the command sees a placeholder in API_TOKEN" "ward-placeholder-" \
	"$(wr sh -c 'printf %s "$API_TOKEN" | cut -c1-17')"
check_eq "the run's CA bundle is what the certificate variables name" \
	"/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt" \
	"$(wr sh -c 'echo $SSL_CERT_FILE $REQUESTS_CA_BUNDLE $NODE_EXTRA_CA_CERTS')"
# One pass over the whole view (it is large: /usr) looks for both secrets
# and for PEM private keys. The needles are rebuilt from their reverses
# inside, into a pipe: no file, argument or variable of the view holds
# them. /proc is searched apart: every process's environment and command
# line. A private key found must not be the run CA's (its public key is in
# the bundle).
cat >"$WS/scan.sh" <<'EOF'
needles() {
	python3 -c 'import os, sys; sys.stdout.write(os.environ["REV"][::-1] + "\n" + os.environ["FREV"][::-1] + "\n")'
}
[ "$(needles | wc -c)" -gt 40 ] || { echo "no needle"; exit 2; }
{ needles; echo "PRIVATE KEY-----"; } |
	grep -r -l -F -s -f - / --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev >/tmp/hits
awk '/ward: this run/{f=1} f' /etc/ssl/certs/ca-certificates.crt | openssl x509 -noout -pubkey >/tmp/ca.pub
[ -s /tmp/ca.pub ] || { echo "no CA in the bundle"; exit 2; }
N=$(needles)
grep -v -x -e /tmp/hits -e /tmp/ca.pub /tmp/hits | tr '\n' '\0' |
	xargs -0 -r grep -l -F -s -f <(printf '%s\n' "$N") | sed 's/^/SECRET IN /'
grep -v -x -e /tmp/hits -e /tmp/ca.pub /tmp/hits | tr '\n' '\0' |
	xargs -0 -r grep -l -s -e "BEGIN EC PRIVATE KEY" -e "BEGIN PRIVATE KEY" | while read -r f; do
	if openssl pkey -in "$f" -pubout 2>/dev/null | cmp -s - /tmp/ca.pub; then echo "CA KEY IN $f"; fi
done
unset N
needles | grep -l -F -s -f - /proc/[0-9]*/environ /proc/[0-9]*/cmdline && echo "SECRET IN /proc"
python3 -c '
import os
s = os.environ["REV"][::-1]
print("SECRET IN env" if any(s in v for v in os.environ.values()) else "env clean")'
echo scanned
EOF
check_eq "a full grep of the view, /proc and the environment finds neither secret nor the CA's key" \
	"$(printf 'env clean\nscanned')" "$(wr bash "$WS/scan.sh")"
check "the secret file is not visible inside" "${W[@]}" sh -c "! cat '$HOME/.secrets/key'"

# --- the placeholder is swapped for its host only -------------------------
check_eq "an allowed request carrying the placeholder gets an answer" "ok GET /get" \
	"$(wr sh -c "curl -sS -H \"Authorization: Bearer \$API_TOKEN\" $AU/get")"
check_eq "the test server got the real secret" "1" "$(seen "tls GET /get auth=Bearer $SECRET ")"
check_eq "the header credential from a file, within its path" "ok GET /keyed/x" \
	"$(wr sh -c "curl -sS -H \"X-Api-Key: \$API_KEY\" $AU/keyed/x")"
check_eq "the test server got the file's secret in X-Api-Key" "1" "$(seen "tls GET /keyed/x auth=None key=$FSECRET ")"
check_eq "captured (no proxy variables) works the same" "ok GET /cap" \
	"$(wr sh -c "curl -sS --noproxy '*' -H \"Authorization: Bearer \$API_TOKEN\" $AU/cap")"
check_eq "the test server got the secret on the captured connection" "1" "$(seen "tls GET /cap auth=Bearer $SECRET ")"
out=$(wr sh -c "curl -sS -H \"Authorization: Bearer \$API_TOKEN\" https://other.test:$SP/leak")
check "the placeholder to another (inspected) host is refused with 403" \
	grep -q "refused GET /leak to other.test (the credential placeholder of API_TOKEN goes to api.test only)" <<<"$out"
check_eq "... and never reached it" "0" "$(seen " /leak ")"
out=$(wr sh -c "curl -sS -H \"X-Api-Key: \$API_KEY\" $AU/get/other")
check "the file credential outside its path prefix is refused" grep -q "goes to api.test/keyed only" <<<"$out"
check_eq "... and never reached the server" "0" "$(seen " /get/other ")"
# The same through SOCKS5 with the request sent along with the greeting
# (the proxy then answers both in one write, also when it hands the
# connection to the inspector): inspected, the placeholder still refused.
cat >"$WS/socks-tls.py" <<'PYEOF'
import socket, ssl, struct, sys
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection(("127.0.0.1", 1080), timeout=20)
h = host.encode()
s.sendall(b"\x05\x01\x00" + b"\x05\x01\x00\x03" + bytes([len(h)]) + h + struct.pack(">H", port))
rep = b""
while len(rep) < 12:
    b = s.recv(12 - len(rep))
    if not b:
        break
    rep += b
if rep[:4] != b"\x05\x00\x05\x00":
    print("socks reply", rep)
    sys.exit(0)
t = ssl.create_default_context().wrap_socket(s, server_hostname=host)
auth = ("Authorization: Bearer %s\r\n" % sys.argv[4]) if len(sys.argv) > 4 else ""
t.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n" % (path, host, auth)).encode())
out = b""
while True:
    b = t.recv(4096)
    if not b:
        break
    out += b
print(out.decode(errors="replace"))
PYEOF
out=$(wr sh -c "python3 socks-tls.py other.test $SP /sockspipe")
check "SOCKS5 pipelined to an inspected host: the answer comes through the inspector" \
	grep -q "^ok GET /sockspipe" <<<"$out"
check_eq "... and the server saw it once" "1" "$(seen "tls GET /sockspipe ")"
out=$(wr sh -c "python3 socks-tls.py other.test $SP /sockleak \"\$API_TOKEN\"")
check "SOCKS5 pipelined: the placeholder to another (inspected) host is refused" \
	grep -q "refused GET /sockleak to other.test" <<<"$out"
check_eq "... and never reached it" "0" "$(seen " /sockleak ")"
out=$(wr sh -c "curl -sS -d \"t=\$API_TOKEN\" -X POST https://other.test:$SP/upload")
check "the placeholder in a body to another host is refused" grep -q "body carries a credential placeholder" <<<"$out"
check_eq "... and the body never reached it" "0" "$(seen "tls POST /upload auth=None key=None body=t=")"
out=$(wr sh -c "curl -sS -H \"Authorization: Bearer \$API_TOKEN\" http://other.test:$HP/plain")
check "the placeholder over plain HTTP is refused" grep -q "over verified TLS only" <<<"$out"
check_eq "... and never reached the plain server" "0" "$(seen " /plain ")"

out=$(wr sh -c "curl -sS -H \"Authorization: Bearer \$API_TOKEN\" $AU/echo")
check "an answer that echoes the secret reaches the command masked" \
	bash -c 'grep -q "^echo Bearer xxxxxxxx" <<<"$1" && ! grep -q -F "$2" <<<"$1"' _ "$out" "$SECRET"
check_eq "... the server did get it" "1" "$(seen "tls GET /echo auth=Bearer $SECRET ")"

# --- presets: git over HTTPS asks its credential helper -----------------------
check_eq "git preset: the credential helper answers the placeholder" "password=ward-placeholder-" \
	"$(wr sh -c 'printf "protocol=https\nhost=git.test\n\n" | git credential fill | grep ^password= | cut -c1-26')"
wr sh -c "pw=\$(printf 'protocol=https\nhost=git.test\n\n' | git credential fill | sed -n 's/^password=//p');
	curl -sS -u \"x-access-token:\$pw\" https://git.test:$SP/repo.git/info/refs" >/dev/null
GB=$(printf 'x-access-token:%s' "$SECRET" | base64 -w0)
check_eq "git preset: the server got Basic x-access-token:SECRET" "1" "$(seen "tls GET /repo.git/info/refs auth=Basic $GB ")"

# --- the CA -----------------------------------------------------------------
check "the bundle inside holds the run's CA and no private key" "${W[@]}" sh -c \
	'grep -q "ward: this run.s CA" /etc/ssl/certs/ca-certificates.crt && ! grep -q "PRIVATE KEY" /etc/ssl/certs/ca-certificates.crt'
check "the upstream is verified: without network.upstream_ca the test server's certificate is refused" \
	bash -c "python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); p[\"network\"][\"upstream_ca\"]=[]; json.dump(p, open(sys.argv[2],\"w\"))' '$T/pol.json' '$T/pol-noca.json' &&
	'$WARD' run -p '$T/pol-noca.json' -- curl -sS $AU/noca 2>&1 | grep -q 'failed verification' && ! grep -q ' /noca ' '$T/requests.log'"

# --- a client that pins fails closed ----------------------------------------
cp "$C/ca.pem" "$WS/pin-ca.pem"
out=$(wr python3 -c "
import socket, ssl
ctx = ssl.create_default_context(cafile='pin-ca.pem')
s = socket.create_connection(('api.test', $SP), timeout=20)
try:
    t = ctx.wrap_socket(s, server_hostname='api.test')
    t.sendall(b'GET /pinned HTTP/1.1\r\nHost: api.test\r\n\r\n'); print('CONNECTED', t.recv(100))
except ssl.SSLError as e:
    print('refused', e.reason)")
check "a client that trusts only the real server's CA fails the handshake" grep -q "^refused" <<<"$out"
check_eq "... and nothing reached the server" "0" "$(seen " /pinned ")"
spki=$(openssl x509 -in "$C/srv.pem" -noout -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64)
check_not "curl --pinnedpubkey (the real server's key) fails closed" \
	"${W[@]}" curl -sS --pinnedpubkey "sha256//$spki" "$AU/pinned2"
check_eq "... and nothing reached the server" "0" "$(seen " /pinned2 ")"
AUD=$(find "$XDG_STATE_HOME" -name '*.jsonl' 2>/dev/null | head -n 50)
check "the audit log says why the pinned handshake failed" \
	bash -c "cat $AUD | grep '\"event\":\"net\"' | grep -q 'the client refused the run.s certificate for api.test'"

# --- request rules ------------------------------------------------------------
check_eq "read-only: GET allowed" "ok GET /get/a" "$(wr curl -sS "$AU/get/a")"
check_eq "read-only: HEAD allowed" "200" "$(wr curl -sS -o /dev/null -w '%{http_code}' -I "$AU/get/h")"
check_eq "POST to /upload allowed" "ok POST /upload/x" "$(wr curl -sS -X POST -d a=1 "$AU/upload/x")"
check_eq "... with its body" "1" "$(seen "tls POST /upload/x auth=None key=None body=a=1")"
out=$(wr curl -sS -w 'code=%{http_code}' -X DELETE "$AU/get/a")
check "DELETE refused with 403 and the reason" bash -c 'grep -q "$1" <<<"$2" && grep -q "^code=403$" <<<"$2"' _ "refused DELETE /get/a to api.test (no rule of network.requests for api.test allows it)" "$out"
out=$(wr curl -sS -w 'code=%{http_code}' -X POST -d b=2 "$AU/uploadx")
check "POST to /uploadx (not within /upload) refused" grep -q "refused POST /uploadx" <<<"$out"
check "... with a 403" grep -q "^code=403$" <<<"$out"
out=$(wr curl -sS -w 'code=%{http_code}' "$AU/get/private/k")
check "a deny rule names itself" grep -q 'network.requests\[2\].*denies it' <<<"$out"
out=$(wr curl -sS --path-as-is -w 'code=%{http_code}' "$AU/upload/../admin")
check "dot segments are refused where rules name paths" grep -q "dot segments" <<<"$out"
out=$(wr curl -sS -w 'code=%{http_code}' -X PUT "http://api.test:$HP/plain-put")
check "plain HTTP: PUT refused by the rules" grep -q "refused PUT /plain-put" <<<"$out"
check "... with a 403" grep -q "^code=403$" <<<"$out"
check_eq "plain HTTP: GET allowed" "ok GET /plain-get" "$(wr curl -sS "http://api.test:$HP/plain-get")"
check_eq "the refused requests never reached the servers" "0" \
	"$(grep -c -e ' DELETE ' -e '/uploadx' -e '/private/' -e '/admin' -e '/plain-put' "$T/requests.log")"
AUD=$(find "$XDG_STATE_HOME" -name '*.jsonl' 2>/dev/null | head -n 50)
check "audit: a net-request deny event names the rule" \
	bash -c "cat $AUD | grep '\"event\":\"net-request\"' | grep '\"method\":\"DELETE\"' | grep -q 'no rule of network.requests'"
check "audit: the credential use is recorded without the secret" \
	bash -c "cat $AUD | grep -q '\"event\":\"net-credential\"' && ! cat $AUD | grep -q -F '$SECRET'"

# --- more than one request per inspected connection (keep-alive) -------------
conn_of() { sed -n "s|^tls GET $1 .* conn=\([0-9]*\)$|\1|p" "$T/requests.log"; }
wr curl -sS "$AU/get/ka1" "$AU/get/ka2" >/dev/null
check "keep-alive: two requests on one connection both reach the server" \
	bash -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$(conn_of /get/ka1)" "$(conn_of /get/ka2)"
# A raw TLS client inside (captured: no proxy variables) sends its requests
# on one connection, in one write (pipelined), and prints all it gets back.
cat >"$WS/raw.py" <<'PY'
import socket, ssl, sys
host, port = sys.argv[1], int(sys.argv[2])
data = sys.argv[3].encode().decode("unicode_escape").encode("latin-1")
ctx = ssl.create_default_context()
if len(sys.argv) > 4:
    ctx.set_alpn_protocols(sys.argv[4].split(","))
t = ctx.wrap_socket(socket.create_connection((host, port), timeout=20), server_hostname=host)
print("alpn=%s" % t.selected_alpn_protocol())
t.sendall(data)
out = b""
try:
    while True:
        k = t.recv(65536)
        if not k:
            break
        out += k
except (ssl.SSLError, OSError) as e:
    out += ("\n[%s]" % e).encode()
print(out.decode(errors="replace"))
PY
raw() { wr python3 raw.py "$@"; }
G='Host: api.test\r\n'
out=$(raw api.test "$SP" "GET /get/ka3 HTTP/1.1\r\n$G\r\nDELETE /get/ka4 HTTP/1.1\r\n$G\r\n")
check "keep-alive: the first request is answered" grep -q "ok GET /get/ka3" <<<"$out"
check "keep-alive: a second request that a rule denies is refused" grep -q "refused DELETE /get/ka4" <<<"$out"
check_eq "... and never reached the server" "0" "$(seen " /get/ka4 ")"
# The placeholder is the sandbox's: the variable is expanded inside.
out=$(wr sh -c "python3 raw.py other.test $SP \"GET /ka5 HTTP/1.1\r\nHost: other.test\r\n\r\nGET /ka6 HTTP/1.1\r\nHost: other.test\r\nAuthorization: Bearer \$API_TOKEN\r\n\r\n\"")
check "keep-alive: a first request to another host passes" grep -q "ok GET /ka5" <<<"$out"
check "keep-alive: a placeholder in a second request to the wrong host is refused" \
	grep -q "refused GET /ka6 to other.test (the credential placeholder of API_TOKEN goes to api.test only)" <<<"$out"
check_eq "... and never reached the server" "0" "$(seen " /ka6 ")"
out=$(wr sh -c "python3 raw.py api.test $SP \"GET /get/ka14 HTTP/1.1\r\nHost: api.test\r\n\r\nGET /get/ka15 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer \$API_TOKEN\r\nConnection: close\r\n\r\n\"")
check "keep-alive: the placeholder is swapped in a second request to its host" grep -q "ok GET /get/ka15" <<<"$out"
check_eq "... the server got the secret in the second request" "1" "$(seen "tls GET /get/ka15 auth=Bearer $SECRET ")"
out=$(raw api.test "$SP" "GET /get/ka7 HTTP/1.1\r\n$G\r\nGET /get/ka8 HTTP/1.1\r\nHost: other.test\r\n\r\n")
check "keep-alive: a second request naming another Host is refused" \
	grep -q "refused GET /get/ka8 to api.test (the Host header names another host" <<<"$out"
check_eq "... and never reached the server" "0" "$(seen " /get/ka8 ")"
out=$(raw api.test "$SP" "GET /get/ka9 HTTP/1.1\r\n$G\r\nGET https://other.test:$SP/get/ka10 HTTP/1.1\r\n$G\r\n")
check "keep-alive: a second request in absolute form to another host is refused" \
	grep -q "names another host or port" <<<"$out"
check_eq "... and never reached the server" "0" "$(seen " /get/ka10 ")"
out=$(raw api.test "$SP" "POST /upload/ka11 HTTP/1.1\r\n${G}Content-Length: 5\r\n\r\nabcdeGET /get/ka12 HTTP/1.1\r\n${G}\r\nPUT /get/ka13 HTTP/1.1\r\n${G}Content-Length: 1\r\n\r\nx")
check "keep-alive: a request after a body is read as a request (allowed)" grep -q "ok GET /get/ka12" <<<"$out"
check "... and the one after it is checked (refused)" grep -q "refused PUT /get/ka13" <<<"$out"
check_eq "... the body reached the server as a body" "1" "$(seen "tls POST /upload/ka11 auth=None key=None body=abcde ")"
check_eq "... and the refused one never" "0" "$(seen " /get/ka13 ")"

# --- smuggling: framing conflicts are refused, chunked bodies parsed ----------
out=$(raw api.test "$SP" "POST /upload/sm1 HTTP/1.1\r\n${G}Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nDELETE /get/sm2 HTTP/1.1\r\n$G\r\n")
check "Content-Length with Transfer-Encoding is refused (400, naming the conflict)" \
	bash -c 'grep -q "HTTP/1.1 400" <<<"$1" && grep -q "both Content-Length and Transfer-Encoding" <<<"$1"' _ "$out"
out=$(raw api.test "$SP" "POST /upload/sm3 HTTP/1.1\r\n${G}Content-Length: 2\r\nContent-Length: 40\r\n\r\nxxDELETE /get/sm4 HTTP/1.1\r\n$G\r\n")
check "a duplicate Content-Length is refused" grep -q "more than one Content-Length" <<<"$out"
out=$(raw api.test "$SP" "POST /upload/sm10 HTTP/1.1\r\n${G}Transfer-Encoding : chunked\r\n\r\n0\r\n\r\nDELETE /get/sm11 HTTP/1.1\r\n$G\r\n")
check "a blank before a header's colon is refused" grep -q "malformed header field" <<<"$out"
out=$(raw api.test "$SP" "POST /upload/sm5 HTTP/1.1\r\n${G}Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nDELETE /get/sm6 HTTP/1.1\r\n$G\r\n")
check "a chunked body is relayed" grep -q "ok POST /upload/sm5" <<<"$out"
check "... and the request after it is checked (refused)" grep -q "refused DELETE /get/sm6" <<<"$out"
check_eq "... the body reached the server whole" "1" "$(seen "tls POST /upload/sm5 auth=None key=None body=abc ")"
out=$(raw api.test "$SP" "POST /upload/sm7 HTTP/1.1\r\n${G}Transfer-Encoding: chunked\r\n\r\n0x3\r\nabc\r\n0\r\n\r\n")
check "a malformed chunk size is refused" grep -q "malformed chunked body" <<<"$out"
out=$(wr sh -c "p=\$(printf %s \"\$API_TOKEN\" | cut -c1-10); q=\$(printf %s \"\$API_TOKEN\" | cut -c11-);
	python3 raw.py other.test $SP \"POST /sm9 HTTP/1.1\r\nHost: other.test\r\nTransfer-Encoding: chunked\r\n\r\n\$(printf %x \${#p})\r\n\$p\r\n\$(printf %x \${#q})\r\n\$q\r\n0\r\n\r\n\"")
check "a placeholder split across chunks to another host is refused" grep -q "body carries a credential placeholder" <<<"$out"
check_eq "none of the smuggled or refused requests reached the server" "0" \
	"$(grep -c -e ' /get/sm2 ' -e '/get/sm4' -e '/get/sm6' -e '/sm7 ' -e ' /sm9 ' -e ' /upload/sm1 ' -e ' /upload/sm3 ' -e 'sm1[01]' "$T/requests.log")"

# --- ALPN: inspected connections speak HTTP/1.1, never an unchecked h2 -------
out=$(raw api.test "$SP" "GET /get/alpn1 HTTP/1.1\r\n${G}Connection: close\r\n\r\n" "h2,http/1.1")
check "a client offering h2 and http/1.1 gets http/1.1" grep -q "^alpn=http/1.1$" <<<"$out"
check "... and its request is answered" grep -q "ok GET /get/alpn1" <<<"$out"
out=$(raw api.test "$SP" 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' "h2")
check "a client offering only h2 gets no h2" grep -q "^alpn=None$" <<<"$out"
check "... and an h2 preface is refused (400)" grep -q "the inspector speaks HTTP/1.x only" <<<"$out"
check_eq "curl --http2 is answered over HTTP/1.1" "ok GET /get/alpn2 1.1" \
	"$(wr curl -sS --http2 -w ' %{http_version}' "$AU/get/alpn2" | tr -d '\n')"
AUD=$(find "$XDG_STATE_HOME" -name '*.jsonl' 2>/dev/null | head -n 50)
check "audit: the net event of a kept-alive connection counts its requests" \
	bash -c "cat $AUD | grep '\"event\":\"net\"' | grep -q '\"requests\":3'"

# --- bad policies -------------------------------------------------------------
bad() {
	printf '{ "version": 1, "network": { "mode": "proxy", %s } }\n' "$1" >"$T/bad.json"
	"$WARD" run -p "$T/bad.json" -- /bin/true 2>&1
	echo "status=$?"
}
out=$(bad '"credentials": [ { "host": "api.test", "env": "X" } ]')
check "a credential without a source names the JSON path" grep -q 'network.credentials\[0\]: expected exactly one of' <<<"$out"
check "... and exits 125" grep -q '^status=125$' <<<"$out"
out=$(bad '"credentials": [ { "host": "api.test", "env": "X", "from_env": "WARD_TEST_UNSET_VAR" } ]')
check "a credential whose variable is unset is refused" grep -q 'WARD_TEST_UNSET_VAR is not set' <<<"$out"
check "... and exits 125" grep -q '^status=125$' <<<"$out"
out=$(bad '"requests": [ { "host": "api.test", "methods": "write" } ]')
check "a bad methods value names the path" grep -q 'network.requests\[0\].methods: expected "read-only" or' <<<"$out"
out=$(bad '"inspect": ["api.test:443"]')
check "an inspect entry with a port is refused" grep -q 'network.inspect\[0\]: expected a host name' <<<"$out"

# --- OpenSSL is loaded only for these runs (src/net/ossl.h): without it,
# a run that asks for inspection is refused, never run uninspected --------
marker=$WS/ran-without-openssl
if grep -q WARD_TEST_OSSL_SONAME "$WARD"; then
	out=$(WARD_TEST_OSSL_SONAME=libward-no-such-ssl.so.3 "$WARD" run -p "$T/pol.json" -- \
		touch "$marker" 2>&1)
	st=$?
	check_eq "no libssl: a run with inspection and credentials exits 125" 125 "$st"
	check "... naming the library it could not load" grep -q 'need OpenSSL 3: cannot load libward-no-such-ssl.so.3' <<<"$out"
	check_not "... and the command did not run (no marker on the host)" test -e "$marker"
	check "without inspection the same switch changes nothing (OpenSSL not loaded)" \
		env WARD_TEST_OSSL_SONAME=libward-no-such-ssl.so.3 "$WARD" run -- true
else
	for n in 1 2 3 4; do ok_skip "needs the test switches (-Dtest_hooks) ($n)"; done
fi
# The real library hidden from a root caller (a private mount namespace):
# the same refusal, through the real soname.
ssl=$(ldconfig -p 2>/dev/null | awk '$1 == "libssl.so.3" && /x86-64/ { print $NF; exit }')
if [ "$(id -u)" -eq 0 ] && [ -n "$ssl" ] && command -v unshare >/dev/null; then
	out=$(unshare -m --propagation private sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' \
		sh "$ssl" "$WARD" run -p "$T/pol.json" -- touch "$marker" 2>&1)
	st=$?
	check_eq "as root, libssl.so.3 unloadable: exit 125" 125 "$st"
	check "... naming libssl.so.3" grep -q 'cannot load libssl.so.3' <<<"$out"
	check_not "... and the command did not run" test -e "$marker"
else
	for n in 1 2 3; do ok_skip "as root with libssl.so.3 and unshare only ($n)"; done
fi

done_testing
