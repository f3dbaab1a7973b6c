#!/usr/bin/env bash
# Interleaved A/B of two ward builds: `ward run -- /bin/true`, alternating
# A and B (in a new random order each round) so that the load of a shared
# machine hits both alike; prints each build's median and B/A.
#   bench/ab.sh OLD_WARD NEW_WARD [ROUNDS] [USER]
# USER (optional): run both as that user (setpriv), from copies it can
# reach, to measure the unprivileged path. WARD_AB_ARGS: options for
# `ward run` (e.g. "--tier 1"), split on spaces.
set -euo pipefail
A=$(realpath "$1")
B=$(realpath "$2")
N=${3:-200}
RUNAS=${4:-}

T=$(mktemp -d /tmp/ward-ab.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/home" "$T/ws" "$T/state" "$T/config"
cp "$A" "$T/a"
cp "$B" "$T/b"
prefix=()
if [ -n "$RUNAS" ]; then
	chown -R "$RUNAS" "$T"
	chmod -R a+rX "$T"
	prefix=(setpriv --reuid="$RUNAS" --regid="$RUNAS" --init-groups)
fi
cd "$T/ws"
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config

python3 - "$N" "$T/a" "$T/b" "${prefix[@]}" <<'PY'
import os, random, statistics, subprocess, sys, time
n, a, b = int(sys.argv[1]), sys.argv[2], sys.argv[3]
prefix = sys.argv[4:]
extra = os.environ.get("WARD_AB_ARGS", "").split()
variants = {"A": prefix + [a, "run"] + extra + ["--", "/bin/true"],
            "B": prefix + [b, "run"] + extra + ["--", "/bin/true"]}
times = {k: [] for k in variants}
for k, argv in variants.items():  # each runs, and warms the caches once
    subprocess.run(argv, check=True, stderr=subprocess.DEVNULL)
for _ in range(n):
    order = list(variants)
    random.shuffle(order)
    for k in order:
        t0 = time.perf_counter_ns()
        r = subprocess.run(variants[k], stderr=subprocess.DEVNULL)
        t1 = time.perf_counter_ns()
        if r.returncode != 0:
            sys.exit(f"{k} failed with {r.returncode}")
        times[k].append((t1 - t0) / 1e6)
ma, mb = statistics.median(times["A"]), statistics.median(times["B"])
print(f"median of {n} alternating runs: A {ma:.3f} ms, B {mb:.3f} ms, B/A {mb / ma:.3f}")
PY
