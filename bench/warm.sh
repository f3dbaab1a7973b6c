#!/usr/bin/env bash
# Warm sessions (docs/sessions.md), measured in one run: bare /bin/true,
# `ward exec ID -- /bin/true` in a live session, a cold `ward run --
# /bin/true`, bubblewrap (when installed); the same for `git status` in a
# small repository; the cost of starting a session against a cold run;
# and the supervisor's peak RSS after 1,000 commands (its RSS after the
# first 10 and after all of them). Then the same commands from a program
# that links libward (bench/live-bench.c: ward_live_exec() against its own
# posix_spawn of the bare command), which has no `ward exec` process to
# start per command. Every variant runs with stdin, stdout
# and stderr on /dev/null, as a harness gives them (a terminal on stdin,
# when this runs from one, would make `ward exec` take its slower path:
# docs/sessions.md, the spare).
#   bench/warm.sh [WARD] [REPETITIONS]
# Targets (issue 14): warm exec <= 2.0x bare (median), p99 <= 3.0x bare;
# session start <= 1.5x a cold run; no RSS growth after the first 10.
# Then, where tier 3 runs (a guest image: `ward setup vm`), a warm tier-3
# session (docs/t3.md): its start (the VM's boot), `ward exec` of
# /bin/true (dynamic), of a trivial static program (built here with
# `cc -static`, in a directory the session reads: beside WARD when that is
# writable, so in a tree the VM keeps cached) and of `git status`, and
# QEMU's RSS; WARD_BENCH_T3_N repetitions (default 20; 0 skips it).
# Target (issue 17): a trivial command <= 10 ms under TCG.
set -euo pipefail
WARD=${1:-build/ward}
N=${2:-300}
WARD=$(realpath "$WARD")
SRC=$(cd "$(dirname "$0")/.." && pwd) # before the cd below: $0 may be relative

T=$(mktemp -d /tmp/ward-bench-warm.XXXXXX)
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config PATH=/usr/bin:/bin
mkdir -p "$HOME" "$T/ws"
cd "$T/ws"
git init -q . && git config user.email b@example.org && git config user.name bench
for i in $(seq 1 50); do echo "line $i" >"f$i.txt"; done
git add -A && git commit -qm init
id=$("$WARD" session new --live)
sup=$(cat "$XDG_STATE_HOME/ward/live/$id/pid")
trap '"$WARD" session stop "$id" >/dev/null 2>&1; rm -rf "$T"' EXIT

bw=()
if command -v bwrap >/dev/null; then
	bw=(bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr --ro-bind /etc /etc)
	for l in bin lib lib64 lib32 sbin; do
		if [ -L "/$l" ]; then bw+=(--symlink "$(readlink "/$l")" "/$l");
		elif [ -d "/$l" ]; then bw+=(--ro-bind "/$l" "/$l"); fi
	done
	bw+=(--dev /dev --proc /proc --tmpfs /tmp --tmpfs "$HOME" --bind "$T/ws" "$T/ws" --chdir "$T/ws")
fi
# Sanity: each variant runs.
"$WARD" exec "$id" -- /bin/true
"$WARD" exec "$id" -- git status >/dev/null
"$WARD" run -- /bin/true

python3 - "$N" "$WARD" "$id" "$sup" -- "${bw[@]}" <<'PY'
import os, random, statistics, subprocess, sys, time
n = int(sys.argv[1]); ward, sid, sup = sys.argv[2], sys.argv[3], sys.argv[4]
bw = sys.argv[6:]
def rss_kb(pid):
    s = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
    return int(s["VmRSS"].split()[0]), int(s["VmHWM"].split()[0])
rss0 = rss_kb(sup)
variants = {}
for cmd_name, cmd in (("/bin/true", ["/bin/true"]), ("git status", ["git", "status", "--short"])):
    variants[f"bare {cmd_name}"] = cmd
    variants[f"ward exec {cmd_name}"] = [ward, "exec", sid, "--"] + cmd
    variants[f"ward run {cmd_name}"] = [ward, "run", "--"] + cmd
    if bw:
        variants[f"bwrap {cmd_name}"] = bw + cmd
times = {k: [] for k in variants}
names = list(variants)
for i in range(n):
    random.shuffle(names)
    for name in names:
        t0 = time.perf_counter_ns()
        r = subprocess.run(variants[name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        t1 = time.perf_counter_ns()
        if r.returncode != 0:
            sys.exit(f"{name} failed with {r.returncode}")
        times[name].append((t1 - t0) / 1e6)
def p99(v):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(0.99 * (len(v) - 1))))]
print(f"median and p99 of {n} runs each, interleaved (ms):")
for k, v in times.items():
    print(f"  {k:28s} median {statistics.median(v):7.3f}   p99 {p99(v):7.3f}")
for c in ("/bin/true", "git status"):
    b, w, r = (times[f"{x} {c}"] for x in ("bare", "ward exec", "ward run"))
    mb, pb = statistics.median(b), p99(b)
    print(f"{c}: warm exec / bare  median {statistics.median(w) / mb:.2f}x (target <= 2.0)"
          f"   p99 {p99(w) / pb:.2f}x (target <= 3.0)")
    print(f"{c}: cold run / bare   median {statistics.median(r) / mb:.2f}x")
    print(f"{c}: cold run / warm   median {statistics.median(r) / statistics.median(w):.2f}x")
    if bw:
        print(f"{c}: bwrap / bare      median {statistics.median(times[f'bwrap {c}']) / mb:.2f}x")

# Session start against a cold run, interleaved.
m = max(20, n // 10)
st, cold = [], []
for i in range(m):
    t0 = time.perf_counter_ns()
    s2 = subprocess.run([ward, "session", "new", "--live"], capture_output=True, text=True).stdout.strip()
    st.append((time.perf_counter_ns() - t0) / 1e6)
    subprocess.run([ward, "session", "stop", s2])
    t0 = time.perf_counter_ns()
    subprocess.run([ward, "run", "--", "/bin/true"])
    cold.append((time.perf_counter_ns() - t0) / 1e6)
ms, mc = statistics.median(st), statistics.median(cold)
print(f"session start median {ms:.3f} ms, cold run median {mc:.3f} ms: {ms / mc:.2f}x (target <= 1.5)")

# The supervisor's memory over 1,000 commands (the ones above included).
done = 4 * n + 2
rss10 = None
for i in range(1000):
    subprocess.run([ward, "exec", sid, "--", "/bin/true"], stdin=subprocess.DEVNULL)
    if i == 9:
        rss10 = rss_kb(sup)
rss_end = rss_kb(sup)
print(f"supervisor RSS: at start {rss0[0]} kB, after 10 more commands {rss10[0]} kB, "
      f"after {done + 1000} commands {rss_end[0]} kB (peak {rss_end[1]} kB)")
PY

# ---- a harness that links libward: no `ward exec` process per command ----
# bench/live-bench.c, built here against the libward.so beside WARD:
# ward_live_exec() in a live session against the same program's own
# posix_spawn of the bare command, interleaved.
LIBDIR=$(dirname "$WARD")
if [ -e "$LIBDIR/libward.so" ] && command -v cc >/dev/null &&
	cc -O2 -o "$T/live-bench" "$SRC/bench/live-bench.c" -I"$SRC/include" \
		-L"$LIBDIR" -lward -Wl,-rpath,"$LIBDIR" 2>"$T/cc.log"; then
	echo "libward (a harness linking it), median and p99 of $N runs each, interleaved (ms):"
	for c in /bin/true "git status --short"; do
		# shellcheck disable=SC2086 # the command's words
		"$T/live-bench" "$N" $c
	done
else
	echo "libward: skipped (no libward.so beside $WARD, or no C compiler: $(head -c 300 "$T/cc.log" 2>/dev/null))"
fi

# ---- tier 3: a warm session's VM ----
T3N=${WARD_BENCH_T3_N:-20}
if [ "$T3N" -gt 0 ] && "$WARD" run --tier 3 -- /bin/true >/dev/null 2>&1; then
	# The trivial static program: outside the writable trees (which the
	# VM mounts afresh after each command), else in $T.
	B=$(mktemp -d "$(dirname "$WARD")/.bench-t3.XXXXXX" 2>/dev/null) || B=$(mktemp -d "$T/bin.XXXXXX")
	chmod 755 "$B"
	trap '"$WARD" session stop "$id" >/dev/null 2>&1; rm -rf "$T" "$B"' EXIT
	printf 'int main(void) { return 0; }\n' >"$B/t.c"
	static=""
	if cc -O2 -static -o "$B/true-static" "$B/t.c" 2>/dev/null; then
		static=$B/true-static
	fi
	printf '{ "version": 1, "fs": { "read_exec": ["%s"] } }\n' "$B" >"$T/t3.json"
	t0=$(date +%s%N)
	id3=$("$WARD" session new --tier 3 -p "$T/t3.json")
	t1=$(date +%s%N)
	trap '"$WARD" session stop "$id" >/dev/null 2>&1; "$WARD" session stop "$id3" >/dev/null 2>&1; rm -rf "$T" "$B"' EXIT
	qemu=$(pgrep -f "ward-session-$id3" | head -1)
	echo "tier 3: session start (the VM's boot) $(((t1 - t0) / 1000000)) ms;" \
		"$("$WARD" probe --quick | grep 'tier 3' | sed 's/^ *//')"
	echo "tier 3: the trivial static program: ${static:-none (no cc -static here)} ($B)"
	python3 - "$T3N" "$WARD" "$id3" "$qemu" "$static" <<'PY'
import statistics, subprocess, sys, time
n, ward, sid, qemu, static = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
variants = {"t3 exec /bin/true": [ward, "exec", sid, "--", "/bin/true"],
            "t3 exec git status": [ward, "exec", sid, "--", "git", "status", "--short"],
            "bare /bin/true": ["/bin/true"]}
if static:
    variants["t3 exec trivial static"] = [ward, "exec", sid, "--", static]
times = {k: [] for k in variants}
for i in range(n):
    for name, cmd in variants.items():
        t0 = time.perf_counter_ns()
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        times[name].append((time.perf_counter_ns() - t0) / 1e6)
        if r.returncode != 0:
            sys.exit(f"{name} failed with {r.returncode}")
for k, v in times.items():
    v = sorted(v)
    print(f"  {k:28s} median {statistics.median(v):8.3f} ms   p99 {v[min(len(v) - 1, int(round(0.99 * (len(v) - 1))))]:8.3f} ms")
print(f"tier 3 warm exec of /bin/true: median {statistics.median(times['t3 exec /bin/true']):.1f} ms")
if static:
    print(f"tier 3 warm exec of a trivial static program: median "
          f"{statistics.median(times['t3 exec trivial static']):.1f} ms (target <= 10 ms under TCG)")
try:
    s = dict(l.split(":", 1) for l in open(f"/proc/{qemu}/status"))
    print(f"tier 3: QEMU RSS {s['VmRSS'].strip()} (peak {s['VmHWM'].strip()}) after {(len(variants) - 1) * n} commands;"
          f" of it anonymous (this VM's own: guest RAM, TCG's cache, QEMU's heap) {s['RssAnon'].strip()},"
          f" file pages (QEMU, its libraries, the guest kernel: page cache every VM shares) {s['RssFile'].strip()}")
except (OSError, KeyError, ValueError):
    pass
PY
else
	echo "tier 3: skipped (WARD_BENCH_T3_N=0, or no tier 3 here: ward setup vm)"
fi
