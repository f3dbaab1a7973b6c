#!/usr/bin/env bash
# Egress proxy benchmark, one run, printing ratios against direct loopback:
#   1. throughput of a BYTES transfer (default 1 GiB) through SOCKS5 and HTTP
#      CONNECT vs the same transfer direct (best of RUNS each; target >= 0.9),
#      and the same through the copy relay (ProxyConfig.relay_copy) that the
#      splice relay replaced, and through reference relays without any policy
#      (proxy-bench relay splice|copy, and sockmap as root): the bound on
#      this machine
#   2. connection setup latency (connect + handshake + 1-byte echo) through
#      the proxy vs direct
#   3. CONNS (default 1000) concurrent connections held through the proxy,
#      then closed: errors and the proxy's descriptors before/while/after;
#      the proxy's memory (VmRSS) before and after MEM_N (default 10,000)
#      sequential connections, twice: the second round must not grow it
#   4. `ward run` startup with network.mode proxy vs none (when it works)
#   5. an HTTPS download (BENCH_TLS_BYTES, default 256 MiB) through an
#      inspected connection (network.inspect, `ward run`) vs the same
#      download direct, both by curl from `openssl s_server -WWW`
#      (target >= 0.8)
#
#   bench/proxy.sh [BUILD_DIR]    (default: build; use a release build)
# Env: BENCH_TLS_BYTES, BENCH_BYTES, BENCH_RUNS, BENCH_CONNS, BENCH_LAT_N, BENCH_MEM_N, BENCH_STARTUP_N.
set -eu

BUILD=${1:-build}
H="$BUILD/tests/helpers"
WARD="$BUILD/ward"
BYTES=${BENCH_BYTES:-1073741824}
RUNS=${BENCH_RUNS:-3}
CONNS=${BENCH_CONNS:-1000}
LAT_N=${BENCH_LAT_N:-1000}
STARTUP_N=${BENCH_STARTUP_N:-200}
MEM_N=${BENCH_MEM_N:-10000}

for b in "$H/proxy-bench" "$H/proxy-harness"; do
	[ -x "$b" ] || { echo "missing $b (build with -Dtests=true)" >&2; exit 1; }
done
T=$(mktemp -d /tmp/ward-bench-proxy.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$T"
}
trap cleanup EXIT

"$H/proxy-bench" serve >"$T/port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
BP=$(cat "$T/port")
"$H/proxy-harness" --allow "src.test:$BP" --host src.test=127.0.0.1 --max $((CONNS + 64)) >"$T/proxy" &
HAR=$!
pids+=("$HAR")
for _ in $(seq 50); do [ -s "$T/proxy" ] && break; sleep 0.1; done
PH=$(sed -n 's/.*http=\([0-9]*\).*/\1/p' "$T/proxy")
PS=$(sed -n 's/.*socks=\([0-9]*\).*/\1/p' "$T/proxy")
# The same proxy with the copy relay, for comparison.
"$H/proxy-harness" --copy --allow "src.test:$BP" --host src.test=127.0.0.1 >"$T/proxy-copy" &
pids+=($!)
for _ in $(seq 50); do [ -s "$T/proxy-copy" ] && break; sleep 0.1; done
PC=$(sed -n 's/.*socks=\([0-9]*\).*/\1/p' "$T/proxy-copy")
DIRECT="direct:$BP"
# Reference relays with no policy (proxy-bench relay): one blocking thread
# per direction, splice through a 1 MiB pipe or read/write with a 1 MiB
# buffer: the best a user-space hop does here (three busy processes on
# this machine's CPUs instead of two); and, as root, the kernel moving the
# bytes itself (a BPF sockmap, bpf_sk_redirect_map): no hop in user space.
refs=(splice copy)
[ "$(id -u)" = 0 ] && refs+=(sockmap)
declare -A REF
for m in "${refs[@]}"; do
	"$H/proxy-bench" relay "$m" "$BP" >"$T/ref-$m" 2>/dev/null &
	pids+=($!)
done
for m in "${refs[@]}"; do
	for _ in $(seq 50); do [ -s "$T/ref-$m" ] && break; sleep 0.1; done
	[ -s "$T/ref-$m" ] && REF[$m]=$(cat "$T/ref-$m")
	: >"$T/r-$m"
done
SOCKS="socks:$PS:src.test:$BP"
HTTPC="http:$PH:src.test:$BP"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
best() { sort -g | head -1; }

echo "# ward egress proxy benchmark ($(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg))"

# 1. throughput: interleave the three so that load changes hit all alike
# The proxy's own CPU time (user + system, from /proc) over the SOCKS5
# transfers: what the extra hop costs whatever the load on the machine.
cpu() { awk '{ printf "%.3f", ($14 + $15) / 100 }' "/proc/$1/stat"; }
: >"$T/d"; : >"$T/s"; : >"$T/h"; : >"$T/c"
pcpu=0
for _ in $(seq "$RUNS"); do
	"$H/proxy-bench" fetch "$DIRECT" "$BYTES" >>"$T/d"
	c0=$(cpu "$HAR")
	"$H/proxy-bench" fetch "$SOCKS" "$BYTES" >>"$T/s"
	pcpu=$(awk -v a="$pcpu" -v x="$c0" -v y="$(cpu "$HAR")" 'BEGIN { printf "%.3f", a + y - x }')
	"$H/proxy-bench" fetch "$HTTPC" "$BYTES" >>"$T/h"
	"$H/proxy-bench" fetch "socks:$PC:src.test:$BP" "$BYTES" >>"$T/c"
	for m in "${!REF[@]}"; do
		timeout 120 "$H/proxy-bench" fetch "direct:${REF[$m]}" "$BYTES" >>"$T/r-$m" || true
	done
done
td=$(best <"$T/d"); ts=$(best <"$T/s"); th=$(best <"$T/h"); tc=$(best <"$T/c")
gbs() { awk -v b="$BYTES" -v t="$1" 'BEGIN { printf "%.2f", b / t / 1e9 }'; }
echo "throughput ($BYTES bytes, best of $RUNS): direct $(gbs "$td") GB/s," \
	"socks5 $(gbs "$ts") GB/s, http-connect $(gbs "$th") GB/s"
echo "throughput ratio (proxy/direct): socks5 $(ratio "$td" "$ts"), http-connect $(ratio "$td" "$th")  (target >= 0.9)"
echo "copy relay (socks5, relay_copy): $(gbs "$tc") GB/s, ratio $(ratio "$td" "$tc")"
for m in "${refs[@]}"; do
	if [ -n "${REF[$m]:-}" ] && [ -s "$T/r-$m" ]; then
		t=$(best <"$T/r-$m")
		echo "reference relay ($m, no policy): $(gbs "$t") GB/s, ratio $(ratio "$td" "$t")"
	else
		echo "reference relay ($m): not available here"
	fi
done
echo "proxy CPU per GiB relayed (socks5, splice): $(awk -v c="$pcpu" -v n="$RUNS" -v b="$BYTES" \
	'BEGIN { printf "%.2f", c / n * 1073741824 / b }') s; the direct transfer takes $(awk -v t="$td" -v b="$BYTES" \
	'BEGIN { printf "%.2f", t * 1073741824 / b }') s per GiB (best)"
# 2. connection setup latency
ld=$("$H/proxy-bench" latency "$DIRECT" "$LAT_N")
ls_=$("$H/proxy-bench" latency "$SOCKS" "$LAT_N")
lh=$("$H/proxy-bench" latency "$HTTPC" "$LAT_N")
echo "setup latency (connect + handshake + 1-byte echo, mean of $LAT_N): direct ${ld} us," \
	"socks5 ${ls_} us, http-connect ${lh} us"
echo "setup latency ratio (proxy/direct): socks5 $(ratio "$ls_" "$ld"), http-connect $(ratio "$lh" "$ld")  (target <= 1.5)"

# 3. concurrent connections, held then closed
nfd() { ls "/proc/$HAR/fd" | wc -l; }
base=$(nfd)
"$H/proxy-bench" hold "$SOCKS" "$CONNS" 3 >"$T/hold" &
hold=$!
for _ in $(seq 600); do [ -s "$T/hold" ] && break; sleep 0.1; done
during=$(nfd)
wait "$hold" && hold_rc=0 || hold_rc=$?
for _ in $(seq 100); do [ "$(nfd)" -le "$base" ] && break; sleep 0.1; done
after=$(nfd)
echo "concurrency: $(cat "$T/hold") (exit $hold_rc); proxy fds before $base, while held $during, after $after" \
	"($([ "$after" -le "$base" ] && echo "no leak" || echo "LEAK"))"

# The proxy's memory over MEM_N sequential connections, twice: the first
# round may warm allocator caches, the second must not grow it.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$HAR/status"; }
m0=$(rss)
"$H/proxy-bench" latency "$SOCKS" "$MEM_N" >/dev/null
m1=$(rss)
"$H/proxy-bench" latency "$SOCKS" "$MEM_N" >/dev/null
m2=$(rss)
echo "memory (proxy VmRSS): start ${m0} KiB, after $MEM_N connections ${m1} KiB, after $((MEM_N * 2)) ${m2} KiB" \
	"($([ $((m2 - m1)) -le 256 ] && echo "no growth" || echo "GROWTH $((m2 - m1)) KiB"))"

# 4. startup cost of mode proxy vs none through the real CLI, and the
# proxy's own share: proxy_spawn + SIGTERM + waitpid in isolation
echo "proxy process start+stop (proxy_spawn, SIGTERM, waitpid; mean of 200): $("$H/proxy-harness" --spawn-cost 200) us"
if [ -x "$WARD" ] && "$WARD" run --net proxy -- /bin/true >/dev/null 2>&1; then
	# Interleaved, one run of each in turn, so that load drifting during
	# the measurement hits both alike; $EPOCHREALTIME avoids a fork per run.
	tn=0 tp=0
	for _ in $(seq "$STARTUP_N"); do
		t0=$EPOCHREALTIME
		"$WARD" run --net none -- /bin/true >/dev/null 2>&1
		t1=$EPOCHREALTIME
		"$WARD" run --net proxy -- /bin/true >/dev/null 2>&1
		t2=$EPOCHREALTIME
		tn=$(awk -v a="$tn" -v x="$t0" -v y="$t1" 'BEGIN { printf "%.6f", a + y - x }')
		tp=$(awk -v a="$tp" -v x="$t1" -v y="$t2" 'BEGIN { printf "%.6f", a + y - x }')
	done
	sn=$(awk -v t="$tn" -v n="$STARTUP_N" 'BEGIN { printf "%.2f", t / n * 1000 }')
	sp=$(awk -v t="$tp" -v n="$STARTUP_N" 'BEGIN { printf "%.2f", t / n * 1000 }')
	echo "startup (ward run -- /bin/true, mean of $STARTUP_N interleaved): none ${sn} ms, proxy ${sp} ms," \
		"proxy costs $(awk -v a="$sp" -v b="$sn" 'BEGIN { printf "%+.2f", a - b }') ms (target < 0.5)," \
		"ratio $(ratio "$sp" "$sn")"
else
	echo "startup: skipped, '$WARD run --net proxy' does not work here"
fi

# 5. inspected TLS vs direct TLS: curl's own transfer speed, best of RUNS
TLS_BYTES=${BENCH_TLS_BYTES:-268435456}
if [ -x "$WARD" ] && command -v openssl >/dev/null && command -v curl >/dev/null &&
	"$WARD" run --net proxy -- /bin/true >/dev/null 2>&1; then
	mkdir -p "$T/www"
	chmod 755 "$T" "$T/www"
	truncate -s "$TLS_BYTES" "$T/www/blob"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=tls.test \
		-addext subjectAltName=DNS:tls.test -keyout "$T/tls.key" -out "$T/tls.pem" >/dev/null 2>&1
	chmod 644 "$T/tls.key" "$T/tls.pem"
	tp=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	(cd "$T/www" && exec openssl s_server -quiet -WWW -accept "127.0.0.1:$tp" -cert "$T/tls.pem" -key "$T/tls.key") \
		>/dev/null 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do curl -s -o /dev/null --resolve "tls.test:$tp:127.0.0.1" --cacert "$T/tls.pem" \
		"https://tls.test:$tp/" && break; sleep 0.1; done
	printf '{ "version": 1, "network": { "mode": "proxy", "allow": ["tls.test:%s"], "hosts": { "tls.test": "127.0.0.1" }, "inspect": ["tls.test"], "upstream_ca": ["%s"] } }\n' \
		"$tp" "$T/tls.pem" >"$T/tls-policy.json"
	: >"$T/td"; : >"$T/ti"
	for _ in $(seq "$RUNS"); do
		curl -s -o /dev/null -w '%{speed_download}\n' --resolve "tls.test:$tp:127.0.0.1" --cacert "$T/tls.pem" \
			"https://tls.test:$tp/blob" >>"$T/td"
		"$WARD" run -p "$T/tls-policy.json" -- curl -s -o /dev/null -w '%{speed_download}\n' \
			"https://tls.test:$tp/blob" >>"$T/ti" 2>/dev/null
	done
	sd=$(sort -g "$T/td" | tail -1); si=$(sort -g "$T/ti" | tail -1)
	echo "inspected TLS ($TLS_BYTES bytes, best of $RUNS): direct $(awk -v v="$sd" 'BEGIN { printf "%.2f", v / 1e9 }') GB/s," \
		"inspected $(awk -v v="$si" 'BEGIN { printf "%.2f", v / 1e9 }') GB/s," \
		"ratio $(ratio "$si" "$sd")  (target >= 0.8)"
else
	echo "inspected TLS: skipped (needs ward run --net proxy, openssl and curl)"
fi
