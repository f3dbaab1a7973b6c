#!/usr/bin/env bash
# Copy-on-write sessions, measured in one run:
#  1. session setup + /bin/true (`ward run --cow -- /bin/true`) for
#     workspaces of 10, 10,000 and 100,000 files; the ratio largest/smallest
#     (target <= 1.2: setup must not walk the workspace);
#  2. diff, apply and undo of 1,000 changed files, against `cp -a` of the
#     same 1,000 files as the reference.
#   bench/cow.sh [WARD] [REPETITIONS]
set -euo pipefail
WARD=${1:-build/ward}
REPS=${2:-20}
WARD=$(realpath "$WARD")

T=$(mktemp -d /tmp/ward-bench-cow.XXXXXX)
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T"' EXIT
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config
mkdir -p "$HOME"

make_ws() { # make_ws DIR N: N small files, 1,000 per directory
	python3 - "$1" "$2" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(root, exist_ok=True)
for i in range(n):
    d = os.path.join(root, "d%d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%d" % i), "w") as f:
        f.write("file %d\n" % i)
PY
}


echo "== session setup + /bin/true ($REPS runs each, interleaved, median)"
for n in 10 10000 100000; do make_ws "$T/ws$n" "$n"; done
for n in 10 10000 100000; do (cd "$T/ws$n" && "$WARD" run --cow -- /bin/true 2>/dev/null); done
python3 - "$WARD" "$REPS" "$T" <<'PY'
import os, statistics, subprocess, sys, time
ward, reps, t = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sizes = [10, 10000, 100000]
times = {n: [] for n in sizes}
for _ in range(reps):
    for n in sizes:
        s = time.perf_counter()
        subprocess.run([ward, "run", "--cow", "--", "/bin/true"], cwd="%s/ws%d" % (t, n),
                       check=True, stderr=subprocess.DEVNULL)
        times[n].append(time.perf_counter() - s)
med = {n: statistics.median(v) * 1000 for n, v in times.items()}
for n in sizes:
    print("  %6d files: %7.2f ms" % (n, med[n]))
print("  ratio 100,000 / 10 files: %.3f (target <= 1.2)" % (med[100000] / med[10]))
PY

echo "== diff / apply / undo of 1,000 changed files vs cp -a"
W=$T/ws1000
make_ws "$W" 1000
cd "$W"
sleep 0.05
id=$("$WARD" session new --storage-only --cow)
"$WARD" run --session "$id" -- sh -c 'for f in d0/*; do echo changed >>"$f"; done'
upper=$XDG_STATE_HOME/ward/sessions/$id/upper
n=$("$WARD" diff "$id" --stat | wc -l)
echo "  pending changes: $n"

# Five rounds of apply + undo (each undo makes the changes pending again);
# medians, since apply and undo flush the file system (syncfs) and so feel
# whatever else the machine writes.
python3 - "$WARD" "$id" "$upper/d0" "$T" "$W" <<'PY'
import os, shutil, statistics, subprocess, sys, time
ward, sid, src, t, ws = sys.argv[1:]
def timed(argv):
    s = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - s) * 1000
res = {"cp -a": [], "diff": [], "apply": [], "undo": []}
for i in range(5):
    dst = "%s/cp-ref%d" % (t, i)
    res["cp -a"].append(timed(["cp", "-a", src, dst]))
    res["diff"].append(timed([ward, "diff", sid]))
    res["apply"].append(timed([ward, "apply", sid]))
    assert open(ws + "/d0/f0").read() == "file 0\nchanged\n", "apply did not write"
    res["undo"].append(timed([ward, "undo", sid]))
    assert open(ws + "/d0/f0").read() == "file 0\n", "undo did not restore"
med = {k: statistics.median(v) for k, v in res.items()}
print("  cp -a (reference): %8.1f ms" % med["cp -a"])
for k in ("diff", "apply", "undo"):
    print("  ward %-5s         %8.1f ms  (%.1fx cp -a)" % (k + ":", med[k], med[k] / med["cp -a"]))
print("  (medians of 5; apply and undo back up every replaced file and flush with")
print("   syncfs once per batch of 128 entries and before commit; cp -a flushes nothing)")
PY
