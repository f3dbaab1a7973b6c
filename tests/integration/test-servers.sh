#!/usr/bin/env bash
# Test suites that start servers, and a run that says why it failed:
# binding any port of the sandbox's own loopback (port 0 too), reaching a
# service on the host's loopback only through --allow-host-port (checked on
# the host: the host's listener sees no connection otherwise), the proxy's
# and the flags' refusals of loopback names, the end-of-run hints, PATH
# entries the sandbox does not show, --log-level timings, and the record a
# run that fails before its command starts leaves (exit 125).
. "$(dirname "$0")/lib.sh"
require_t2
command -v python3 >/dev/null || skip_all "python3 is needed"
command -v curl >/dev/null || skip_all "curl is needed"
# A harness's PATH: what the caller's shell has (a pyenv shim dir, say)
# would add its own line to every run's stderr (checked below on purpose).
export PATH=/usr/local/bin:/usr/bin:/bin
audit_log="$XDG_STATE_HOME/ward/audit.jsonl"
last_event() { grep "\"event\":\"$1\"" "$audit_log" | tail -1; }

# --- the sandbox's own loopback -------------------------------------------
out=$("$WARD" run -- bash -c '
python3 -m http.server 18080 --bind 127.0.0.1 >/dev/null 2>&1 &
for _ in $(seq 50); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.1; done
curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:18080/' 2>&1)
check_eq "python3 -m http.server inside serves a client inside (fixed port)" 200 "$out"
check_eq "an ephemeral bind (port 0) and a connect to it work" "echo-ok" "$("$WARD" run -- python3 -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
c = socket.create_connection(s.getsockname()); a, _ = s.accept()
c.sendall(b"echo-ok"); print(a.recv(16).decode())' 2>&1)"
check_eq "IPv6 loopback too ([::1], port 0)" "v6-ok" "$("$WARD" run -- python3 -c '
import socket
s = socket.socket(socket.AF_INET6); s.bind(("::1", 0)); s.listen()
c = socket.create_connection(s.getsockname()[:2]); print("v6-ok")' 2>&1)"
check "the start event does not claim Landlock port rules by default" \
	bash -c "! grep -q '\"landlock-net\"' <<<'$(last_event start)'"

# --- the host's loopback ----------------------------------------------------
# Two listeners on the host, each logging every connection it accepts.
cat >"$T/listen.py" <<'PY'
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
log = open(sys.argv[1], "a")
def serve(c):
    data = c.recv(64)
    log.write("conn %r\n" % data); log.flush()
    c.sendall(b"host-says-" + data)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
start_listener() { # start_listener NAME: prints the port
	python3 "$T/listen.py" "$T/$1.log" >"$T/$1.port" 2>/dev/null &
	at_exit "kill_id TERM $(proc_id "$!")"
	for _ in $(seq 50); do [ -s "$T/$1.port" ] && break; sleep 0.1; done
	touch "$T/$1.log"
	cat "$T/$1.port"
}
HA=$(start_listener a)
HB=$(start_listener b)
talk='import socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
    c.sendall(b"hi"); print(c.recv(64).decode() or "closed")
except OSError as e:
    print("refused", e.errno)'
check "control: the host's listener answers on the host" \
	grep -q host-says-hi <<<"$(python3 -c "$talk" "$HA")"
: >"$T/a.log"
out=$("$WARD" run -- python3 -c "$talk" "$HA" 2>/dev/null)
check "without --allow-host-port, 127.0.0.1:$HA inside is not the host's (got '$out')" \
	grep -q '^refused' <<<"$out"
check_eq "... and the host's listener saw no connection" "" "$(cat "$T/a.log")"
check_eq "with --allow-host-port $HA, 127.0.0.1:$HA inside reaches the host's" "host-says-hi" \
	"$("$WARD" run --allow-host-port "$HA" -- python3 -c "$talk" "$HA" 2>&1)"
check "... and the host's listener saw it" grep -q "conn b'hi'" "$T/a.log"
check "the start event records the host port" grep -q "\"host_ports\":\[$HA\]" <<<"$(last_event start)"
ev=$(grep '"event":"net"' "$audit_log" | grep '"kind":"host-port"' | tail -1)
check "the relay is audited: a net event, kind host-port, verdict allow, its port" \
	bash -c "grep -q '\"verdict\":\"allow\"' <<<'$ev' && grep -q '\"port\":$HA' <<<'$ev' && grep -q '\"list\":\"network.host_ports\"' <<<'$ev'"
out=$("$WARD" run --allow-host-port "$HA" -- python3 -c "$talk" "$HB" 2>/dev/null)
check "only the allowed port: 127.0.0.1:$HB stays the sandbox's own (got '$out')" \
	grep -q '^refused' <<<"$out"
check_eq "... and the host's other listener saw no connection" "" "$(cat "$T/b.log")"
printf '{"version":1,"network":{"host_ports":[%s]}}\n' "$HB" >"$T/hp.json"
check_eq "the policy key network.host_ports does the same" "host-says-hi" \
	"$("$WARD" run -p "$T/hp.json" -- python3 -c "$talk" "$HB" 2>&1)"
check_eq "with --net proxy as well" "host-says-hi" \
	"$("$WARD" run --net proxy --allow-host-port "$HA" -- python3 -c "$talk" "$HA" 2>&1)"
out=$("$WARD" run --net proxy --allow-host-port 3128 -- true 2>&1)
st=$?
check_eq "a host port that is the proxy's port is refused (125)" 125 "$st"
check "... saying so" grep -q "port 3128 is the proxy's port" <<<"$out"
printf '{"version":1,"network":{"host_ports":[0]}}\n' >"$T/hp0.json"
out=$("$WARD" run -p "$T/hp0.json" -- true 2>&1)
check "network.host_ports [0] is refused with its JSON path" grep -q "network.host_ports\[0\]" <<<"$out"
# A port closed on the host: the relay's connect fails, the client sees
# the stream end, the audit says why.
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$("$WARD" run --allow-host-port "$closed" -- python3 -c "$talk" "$closed" 2>/dev/null)
check "a host port with nothing listening: the connection is reset (got '$out')" \
	grep -qE '^refused 104$' <<<"$out"
check_todo "a host port with nothing listening: connect() inside is refused as on the host (got '$out')" \
	"the relay's listener accepts before the host's port is tried; the client sees a reset" \
	grep -qE '^refused 111$' <<<"$out"
check "... and the audit says the connect was refused" \
	grep -q "\"kind\":\"host-port\".*\"port\":$closed.*\"verdict\":\"error\".*Connection refused" "$audit_log"

# --- localhost is not a domain ----------------------------------------------
marker="$T/marker"
for d in localhost localhost:5432 127.0.0.1:5432 "[::1]:5432"; do
	out=$("$WARD" run --allow-domain "$d" -- touch "$marker" 2>&1)
	st=$?
	check_eq "--allow-domain $d is refused (125)" 125 "$st"
	check "... and the refusal names --allow-host-port" grep -q -- "--allow-host-port PORT" <<<"$out"
done
printf '{"version":1,"network":{"mode":"proxy","allow":["localhost"]}}\n' >"$T/lo.json"
out=$("$WARD" run -p "$T/lo.json" -- touch "$marker" 2>&1)
check "network.allow [\"localhost\"] is refused with its JSON path and the way that works" \
	grep -q 'network.allow\[0\].*network.host_ports' <<<"$out"
check_not "nothing ran" test -e "$marker"
out=$("$WARD" run --allow-domain http://example.org -- true 2>&1)
check "--allow-domain http://example.org says the scheme is not allowed" \
	grep -q 'a URL scheme ("http://", "https://") is not allowed' <<<"$out"
check_not "... not that the port must be a number" grep -q "port must be a number" <<<"$out"
# The proxy's answer to a loopback name says how to reach the host's.
out=$("$WARD" run --allow-domain example.org -- curl -sS --noproxy '' -x http://127.0.0.1:3128 "http://localhost:$HA/" 2>/dev/null)
check "the proxy's 403 for localhost names --allow-host-port $HA" \
	grep -q "localhost inside the sandbox is the sandbox's own: for the host's 127.0.0.1:$HA use --allow-host-port $HA" <<<"$out"
check_eq "... and the host's listener saw nothing" "" "$(cat "$T/b.log" | grep -v "conn b'hi'")"

# --- hints after the run ------------------------------------------------------
err=$("$WARD" run -- curl -sS --max-time 5 http://192.0.2.1/ 2>&1 >/dev/null)
check "--net none: a failed command that tried to connect gets one hint line" \
	grep -q "^ward: Hint: the command tried to resolve or connect (1 connect or send with no route), but this run has no network (--net none)" <<<"$err"
check "... and the exit event counts the attempt" grep -q '"net_attempts":{"no_route":1,' <<<"$(last_event exit)"
err=$("$WARD" run -- python3 -c 'import socket; socket.getaddrinfo("example.org", 80)' 2>&1 >/dev/null)
check "--net none: a failed name lookup gets the hint" grep -q "^ward: Hint: the command tried to resolve or connect" <<<"$err"
err=$("$WARD" run -- sh -c 'curl -s --max-time 5 http://192.0.2.1/; exit 0' 2>&1 >/dev/null)
check_eq "no hint when the command succeeded" "" "$err"
err=$("$WARD" run -- false 2>&1)
check_eq "no hint when the command did not touch the network" "" "$err"
err=$("$WARD" run -- python3 -c "$talk
sys.exit(1)" "$HA" 2>&1 >/dev/null)
check "a refused connect to a loopback port hints at --allow-host-port" \
	grep -q "^ward: Hint: 1 connection to a loopback port where nothing listened inside the sandbox.*--allow-host-port PORT" <<<"$err"
printf '{"version":1,"network":{"mode":"proxy","allow":["example.org"],"capture":false}}\n' >"$T/nocap.json"
err=$("$WARD" run -p "$T/nocap.json" -- curl -sS --noproxy '*' --max-time 5 http://192.0.2.1/ 2>&1 >/dev/null)
check "--net proxy, capture off: a failed direct connect hints that only the proxy reaches out" \
	grep -q "^ward: Hint: the command tried to resolve or connect directly" <<<"$err"
err=$("$WARD" run --allow-domain example.org -- curl -sS --noproxy '*' --max-time 5 http://192.0.2.1/ 2>&1 >/dev/null)
check "--net proxy: a captured direct connect to an address not allowed names the refusal" \
	grep -q "^ward: the proxy refused 1 destination: 192.0.2.1:80 (not in network.allow)" <<<"$err"

# --- PATH entries the sandbox does not show -----------------------------------
mkdir -p "$HOME/.pyenv/shims" "$HOME/.cargo/bin"
printf '#!/bin/sh\necho shim\n' >"$HOME/.pyenv/shims/python3"
chmod +x "$HOME/.pyenv/shims/python3"
err=$(PATH="$HOME/.pyenv/shims:$HOME/.cargo/bin:$PATH" "$WARD" run -- true 2>&1)
check_eq "hidden PATH entries are reported in one line" 1 "$(grep -c '^ward: PATH entries not visible' <<<"$err")"
check "... naming the pyenv shims and the fs.read_exec entry that exposes them" \
	grep -qF "$HOME/.pyenv/shims (fs.read_exec: [\"~/.pyenv\"])" <<<"$err"
check "... and the preset that exposes ~/.cargo/bin" grep -qF "$HOME/.cargo/bin (--preset rust)" <<<"$err"
check "the start event lists them" grep -q '"path_hidden":\[{"path":"'"$HOME"'/.pyenv/shims"' <<<"$(last_event start)"
err=$(PATH="$HOME/.pyenv/shims:$PATH" "$WARD" run --tier 0 -- true 2>&1)
check_eq "--tier 0 (no view) reports no hidden PATH entry" "" "$(grep -v 'tier' <<<"$err" | grep PATH)"
err=$(PATH="$HOME/.cargo/bin:$PATH" "$WARD" run --preset rust -- true 2>&1)
check_eq "an entry the policy exposes is not reported" "" "$err"
printf '{"version":1,"fs":{"read_exec":["~/.pyenv"]}}\n' >"$T/pyenv.json"
check_eq "with the suggested entry the shim runs inside" "shim" \
	"$(PATH="$HOME/.pyenv/shims:$PATH" "$WARD" run -p "$T/pyenv.json" -- python3 2>&1)"

# --- --log-level ---------------------------------------------------------------
err=$("$WARD" run --log-level info -- true 2>&1)
check "--log-level info shows the setup phases with timings" \
	grep -qE '^ward: sandbox plan built .* in [0-9.]+ ms$' <<<"$err"
check "... and the command's run time" grep -qE '^ward: command ended after [0-9.]+ ms' <<<"$err"
err=$("$WARD" run --log-level debug -- true 2>&1)
check "--log-level debug shows each setup step inside the sandbox" \
	bash -c "grep -qE '^ward: setup step landlock +done in [0-9.]+ ms$' <<<'$err' && grep -qE '^ward: setup step seccomp +done' <<<'$err'"
check_eq "the default level logs nothing" "" "$("$WARD" run -- true 2>&1)"

# --- a run that fails before its command starts --------------------------------
printf '{"version":1,"limits":{"pids":0}}\n' >"$T/bad.json"
rm -f "$T/result.json"
"$WARD" run -p "$T/bad.json" --result "$T/result.json" -- touch "$marker" >/dev/null 2>&1
st=$?
check_eq "an invalid policy exits 125" 125 "$st"
check "... and writes --result with the reason" python3 - "$T/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["exit_code"] == 125 and r["setup_step"] == "policy", r
assert "limits.pids" in r["error"] and r["session"], r
PY
ev=$(last_event error)
check "... and an error audit event with the step and the reason" \
	bash -c "grep -q '\"step\":\"policy\"' <<<'$ev' && grep -q 'limits.pids' <<<'$ev' && grep -q '\"exit_code\":125' <<<'$ev'"
"$WARD" run --timeout soon --result "$T/result-args.json" -- touch "$marker" >/dev/null 2>&1
check "a usage error writes its result too" grep -q '"setup_step":[[:space:]]*"arguments"' "$T/result-args.json"
check "... and an error event" grep -q '"step":"arguments".*--timeout' <<<"$(last_event error)"
WARD_VM_DIR="$T/no-vm-image" "$WARD" run --tier 3 --result "$T/result3.json" -- true >/dev/null 2>&1
check "an unavailable tier writes its result too" grep -q '"setup_step":[[:space:]]*"tier"' "$T/result3.json"
"$WARD" run --result "$T/result-nf.json" -- /nonexistent/cmd >/dev/null 2>&1
check "a command that is not found: error event and the reason in --result" \
	bash -c "grep -q '\"error\":[[:space:]]*\"exec: /nonexistent/cmd: command not found\"' '$T/result-nf.json' && grep -q '\"step\":\"exec\"' <<<'$(last_event error)'"
check_not "nothing ran" test -e "$marker"
# docs/policy.md: the workspace may not contain ward's state directory.
mkdir -p "$T/outer/ws"
out=$(cd "$T/outer" && XDG_STATE_HOME="$T/outer/state" "$WARD" run -- touch "$marker" 2>&1)
st=$?
check_eq "a workspace containing ward's state directory is refused (125)" 125 "$st"
check "... saying so" grep -q "ward's own.*'$T/outer/state/ward'" <<<"$out"
out=$(cd "$T/outer/ws" && XDG_CONFIG_HOME="$T/outer/ws/cfg" "$WARD" run -- touch "$marker" 2>&1)
check "... and one containing its config directory" grep -q "ward's own.*'$T/outer/ws/cfg/ward'" <<<"$out"
check_not "nothing ran" test -e "$marker"

# --- the docs list every option -------------------------------------------------
readme="${WARD_SRC:-}/README.md"
man="${WARD_SRC:-}/docs/ward.1"
if [ -f "$readme" ] && [ -f "$man" ]; then
	missing=""
	for opt in $("$WARD" run --help | grep -oE -- '--[a-z][a-z-]+' | sort -u) --version; do
		grep -q -- "$opt" "$readme" || missing="$missing README:$opt"
		grep -qF -- "${opt//-/\\-}" "$man" || missing="$missing ward.1:$opt"
	done
	check_eq "every ward run option and --version are in the README and ward.1" "" "$missing"
	check "ward --help names --version" grep -q -- "--version" <<<"$("$WARD" --help)"
else
	ok_skip "README.md or docs/ward.1 not in WARD_SRC here"
fi

done_testing
