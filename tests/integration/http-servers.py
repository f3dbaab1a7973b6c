# The host-side servers of the network tests, on 127.0.0.1: plain HTTP,
# HTTPS (DIR/cert.pem, DIR/key.pem) and a TCP echo. Every request is a
# line "plain|tls HOST PATH" in DIR/requests.log, every echo connection
# "echo connect", and with --sni every TLS handshake "sni NAME". The
# ports are written to DIR/ports ("HTTP HTTPS ECHO") once all listen.
#   python3 http-servers.py DIR [--sni]
import http.server, os, socketserver, ssl, sys, threading

d = sys.argv[1]
log = open(d + "/requests.log", "a", buffering=1)


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        log.write("%s %s %s\n" % (self.server.name, self.headers.get("Host"), self.path))
        body = b"hello-ward " + self.server.name.encode() + b"\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


plain = S(("127.0.0.1", 0), H)
plain.name = "plain"
tls = S(("127.0.0.1", 0), H)
tls.name = "tls"
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(d + "/cert.pem", d + "/key.pem")
if "--sni" in sys.argv[2:]:
    def sni(sock, name, c):
        log.write("sni %s\n" % name)
    ctx.sni_callback = sni
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)


class E(socketserver.BaseRequestHandler):
    def handle(self):
        log.write("echo connect\n")
        while True:
            b = self.request.recv(65536)
            if not b:
                break
            self.request.sendall(b)


class ES(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


echo = ES(("127.0.0.1", 0), E)
for s in (plain, tls, echo):
    threading.Thread(target=s.serve_forever, daemon=True).start()
with open(d + "/ports.tmp", "w") as f:
    f.write("%d %d %d\n" % (plain.server_address[1], tls.server_address[1], echo.server_address[1]))
os.rename(d + "/ports.tmp", d + "/ports")
threading.Event().wait()
