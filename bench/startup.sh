#!/usr/bin/env bash
# Startup cost of a sandboxed /bin/true, measured in one run against the
# references: bare /bin/true and bubblewrap with an equivalent
# configuration (read-only system dirs, writable workspace, fresh /dev,
# /proc and /tmp, every namespace unshared, the fake home hidden).
# Also ward without Landlock and seccomp (test switch), to price them, and
# tier 1 (--tier 1: Landlock, seccomp and the wall check, no namespaces)
# against bare /bin/true, and T1 without the wall check (test switch), to
# price the check. And ward under a managed ceiling (the test switch
# WARD_TEST_MANAGED_FILE, a root-owned file made here when run as root), to
# price the ceiling: its load, the ownership walk, the narrowing checks.
#   bench/startup.sh [WARD] [REPETITIONS]
set -euo pipefail
WARD=${1:-build/ward}
N=${2:-300}
WARD=$(realpath "$WARD")
SRC=${WARD_BENCH_SRC:-$(cd "$(dirname "$0")/.." && pwd)} # before any cd: $0 may be relative

# Users are not root: as root, measure again as an unprivileged user
# (ward-test, created where missing), from a copy it can reach. Root pays
# for stronger limits on hosts whose controllers are on cgroup v1 (the
# migration waits for an RCU grace period); see docs/hardening.md.
if [ "$(id -u)" -eq 0 ] && [ -z "${WARD_BENCH_MANAGED:-}" ]; then
	managed_dir=$(mktemp -d /run/ward-bench-managed.XXXXXX)
	chmod 755 "$managed_dir"
	cat >"$managed_dir/managed.json" <<'JSON'
{
  "fs": { "read_write": ["/tmp"], "deny": ["/etc/ward"] },
  "network": { "mode": "proxy", "allow": ["*.example.com", "pypi.org"] },
  "limits": { "timeout_s": 1800, "pids": 4096 },
  "git": "read-only",
  "allowed_tiers": [1, 2]
}
JSON
	chmod 644 "$managed_dir/managed.json"
	export WARD_BENCH_MANAGED="$managed_dir/managed.json"
	trap 'rm -rf "$managed_dir"' EXIT
fi
if [ "$(id -u)" -eq 0 ] && [ -z "${WARD_BENCH_NO_UNPRIV:-}" ]; then
	id -u ward-test >/dev/null 2>&1 || useradd -m ward-test
	stage=$(mktemp -d /tmp/ward-bench-stage.XXXXXX)
	cp "$WARD" "$stage/ward"
	# Tier 3 uses only a guest image made with ward's own guest init.
	[ ! -f "$(dirname "$WARD")/ward-guest-init" ] || cp "$(dirname "$WARD")/ward-guest-init" "$stage/"
	cp "$0" "$stage/startup.sh"
	# The libward arm: the library beside the copy, and what builds against it.
	cp -a "$(dirname "$WARD")"/libward.so* "$stage/" 2>/dev/null || true
	mkdir -p "$stage/src/bench" "$stage/src/include/ward"
	cp "$SRC/bench/live-bench.c" "$stage/src/bench/"
	cp "$SRC/include/ward/ward.h" "$stage/src/include/ward/"
	chmod -R a+rX "$stage"
	echo "== as root =="
	WARD_BENCH_NO_UNPRIV=1 bash "$0" "$WARD" "$N"
	echo
	echo "== as the unprivileged user ward-test =="
	(cd "$stage" && setpriv --reuid=ward-test --regid=ward-test --init-groups --reset-env \
		env HOME="$(getent passwd ward-test | cut -d: -f6)" PATH=/usr/bin:/bin \
		WARD_BENCH_NO_UNPRIV=1 WARD_BENCH_MANAGED="$WARD_BENCH_MANAGED" \
		WARD_BENCH_T3_N="${WARD_BENCH_T3_N:-5}" WARD_BENCH_SRC="$stage/src" \
		bash "$stage/startup.sh" "$stage/ward" "$N")
	rc=$?
	rm -rf "$stage"
	exit $rc
fi
command -v bwrap >/dev/null || { echo "bwrap not installed (apt-get install bubblewrap)"; exit 1; }

T=$(mktemp -d /tmp/ward-bench.XXXXXX)
trap 'rm -rf "$T" ${managed_dir:+"$managed_dir"}' EXIT
mkdir -p "$T/home/.ssh" "$T/ws"
echo secret >"$T/home/.ssh/id_rsa"
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config
cd "$T/ws"

bwrap_args=(--unshare-all --die-with-parent --new-session
	--ro-bind /usr /usr --ro-bind /etc /etc)
for l in bin lib lib64 lib32 sbin; do
	if [ -L "/$l" ]; then bwrap_args+=(--symlink "$(readlink "/$l")" "/$l");
	elif [ -d "/$l" ]; then bwrap_args+=(--ro-bind "/$l" "/$l"); fi
done
[ -d /opt ] && bwrap_args+=(--ro-bind /opt /opt)
bwrap_args+=(--dev /dev --proc /proc --tmpfs /tmp --tmpfs "$HOME" --bind "$T/ws" "$T/ws"
	--chdir "$T/ws" /bin/true)

# Sanity: each variant runs.
/bin/true
bwrap "${bwrap_args[@]}"
"$WARD" run -- /bin/true
WARD_TEST_NO_HARDENING=1 "$WARD" run -- /bin/true
"$WARD" run --tier 1 -- /bin/true
[ -z "${WARD_BENCH_MANAGED:-}" ] || WARD_TEST_MANAGED_FILE=$WARD_BENCH_MANAGED "$WARD" run -- /bin/true

python3 - "$N" "$WARD" -- "${bwrap_args[@]}" <<'PY'
import os, random, statistics, subprocess, sys, time
n = int(sys.argv[1]); ward = sys.argv[2]; bw = sys.argv[4:]
PAUSE = float(os.environ.get("WARD_BENCH_PAUSE", "0"))
variants = {
    "bare /bin/true": (["/bin/true"], None),
    "bwrap": (["bwrap"] + bw, None),
    "ward (Landlock+seccomp)": ([ward, "run", "--", "/bin/true"], None),
    "ward (neither, test switch)": ([ward, "run", "--", "/bin/true"], {"WARD_TEST_NO_HARDENING": "1"}),
    "ward --tier 1": ([ward, "run", "--tier", "1", "--", "/bin/true"], None),
    "ward --tier 1 (no wall check)": ([ward, "run", "--tier", "1", "--", "/bin/true"], {"WARD_TEST_NO_WALLS": "1"}),
}
if os.environ.get("WARD_BENCH_MANAGED"):
    variants["ward (managed ceiling)"] = ([ward, "run", "--", "/bin/true"],
                                          {"WARD_TEST_MANAGED_FILE": os.environ["WARD_BENCH_MANAGED"]})
times = {k: [] for k in variants}
base_env = dict(os.environ)
names = list(variants)
for i in range(n):
    # Interleaved and in a new random order each round, so that machine
    # noise (and one run's namespace teardown, which the next one pays for)
    # hits every variant alike. WARD_BENCH_PAUSE=SECONDS waits between runs.
    random.shuffle(names)
    for name in names:
        argv, extra = variants[name]
        time.sleep(PAUSE)
        env = dict(base_env, **extra) if extra else base_env
        t0 = time.perf_counter_ns()
        r = subprocess.run(argv, env=env, stderr=subprocess.DEVNULL)
        t1 = time.perf_counter_ns()
        if r.returncode != 0:
            sys.exit(f"{name} failed with {r.returncode}")
        times[name].append((t1 - t0) / 1e6)
med = {k: statistics.median(v) for k, v in times.items()}
print(f"startup, median of {n} runs (ms):")
for k, v in med.items():
    print(f"  {k:30s} {v:7.3f}")
w, b, nh = med["ward (Landlock+seccomp)"], med["bwrap"], med["ward (neither, test switch)"]
print(f"ratio ward/bwrap:                 {w / b:.3f}  (target <= 1.0)")
print(f"Landlock+seccomp cost:            {w - nh:.3f} ms  (target < 0.3)")
print(f"ward over bare exec:              {w - med['bare /bin/true']:.3f} ms")
t1, bare = med["ward --tier 1"], med["bare /bin/true"]
print(f"ratio T1/bare:                    {t1 / bare:.3f}  (target <= 2.0)")
print(f"T1 over bare exec:                {t1 - bare:.3f} ms")
print(f"the wall check (T1):              {t1 - med['ward --tier 1 (no wall check)']:.3f} ms  (target < 0.1)")
if "ward (managed ceiling)" in med:
    print(f"the managed ceiling:              {med['ward (managed ceiling)'] - w:.3f} ms  (target: not measurable)")
PY

# Tier 1 from a harness that links libward (bench/live-bench.c --cold):
# each command a cold run of its own, with no `ward run` process to start,
# against the same program's posix_spawn of the bare command, interleaved.
# What is left of T1/bare without the CLI's own process start.
LIBDIR=$(dirname "$WARD")
if [ -e "$LIBDIR/libward.so" ] && [ -f "$SRC/bench/live-bench.c" ] && command -v cc >/dev/null &&
	cc -O2 -o "$T/live-bench" "$SRC/bench/live-bench.c" -I"$SRC/include" \
		-L"$LIBDIR" -lward -Wl,-rpath,"$LIBDIR" 2>"$T/cc.log"; then
	echo "tier 1 through libward (ward_run_exec per command), median and p99 of $N runs each (ms):"
	"$T/live-bench" --cold 1 "$N" /bin/true
else
	echo "tier 1 through libward: skipped (no libward.so beside $WARD, or no C compiler)"
fi

# Tier 3 (a QEMU micro-VM inside the T2 sandbox), cold: a VM per run,
# against T2 in the same loop. Seconds, not milliseconds, under TCG: few
# repetitions (WARD_BENCH_T3_N, default 5; 0 skips it). Skipped without qemu or the
# guest image (`ward setup vm`). The first run also settles the engine (the
# KVM probe, cached per boot): the label says which, and which kernel.
# Peak RSS: the largest process among the runs' descendants (QEMU).
# Warm T3 (a VM kept up by a warm session) is not built yet.
if [ "${WARD_BENCH_T3_N:-5}" -gt 0 ] && "$WARD" run --tier 3 --result "$T/t3.json" -- /bin/true 2>/dev/null; then
	python3 - "${WARD_BENCH_T3_N:-5}" "$WARD" "$T/t3.json" <<'PY'
import json, resource, statistics, subprocess, sys, time
n = int(sys.argv[1]); ward = sys.argv[2]
vm = json.load(open(sys.argv[3])).get("vm", {})
image = vm.get("image", "?").rstrip("/").split("/")[-1]
t3 = f"T3 cold ({vm.get('engine', '?')})"
print(f"tier 3: engine {vm.get('engine', '?')} ({vm.get('engine_reason', '')}); "
      f"image {image}; guest memory {vm.get('memory_mb', '?')} MB")
variants = {"T2 cold": [ward, "run", "--", "/bin/true"],
            t3: [ward, "run", "--tier", "3", "--", "/bin/true"]}
times = {k: [] for k in variants}
for i in range(n):
    for name, argv in variants.items():
        t0 = time.perf_counter_ns()
        r = subprocess.run(argv, stderr=subprocess.DEVNULL)
        t1 = time.perf_counter_ns()
        if r.returncode != 0:
            sys.exit(f"{name} failed with {r.returncode}")
        times[name].append((t1 - t0) / 1e6)
print(f"tier 3, median of {n} runs (ms):")
for k, v in times.items():
    print(f"  {k:30s} {statistics.median(v):9.1f}  (min {min(v):.1f}, max {max(v):.1f})")
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"peak RSS of a run's process (QEMU): {rss:.0f} MB  (target <= 150)")
print("T3 cold target under TCG: <= 700 ms (KVM: not measurable without VMX/SVM)")
PY
else
	echo "tier 3: skipped (no qemu-system-x86_64 or no guest image: 'ward setup vm')"
fi
