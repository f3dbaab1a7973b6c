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
        log.write("%s %s %s auth=%s key=%s body=%s\n" % (self.server.name, self.command, self.path,
                  self.headers.get("Authorization"), self.headers.get("X-Api-Key"),
                  body.decode(errors="replace")))
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
at_exit "kill $!"
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

done_testing
