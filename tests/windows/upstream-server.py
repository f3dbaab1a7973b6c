# The loopback upstream of the Wine proxy tests (test-wine-proxy.sh,
# test-wine-runner.sh; started by wine-common.sh's upstream_start): the
# first line of every connection's request goes to LOG, every connection
# gets "HTTP/1.0 200" and "upstream-ok". The port is printed once it listens.
#   python3 upstream-server.py LOG
import socket, sys, threading

s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
log = open(sys.argv[1], "a")


def serve(c):
    c.settimeout(20)
    try:
        d = c.recv(4096)
        log.write(d.split(b"\r\n")[0].decode(errors="replace") + "\n")
        log.flush()
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nupstream-ok\n")
    except Exception:
        pass
    c.close()


while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
