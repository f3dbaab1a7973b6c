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

now_us() { echo $(($(date +%s%N) / 1000)); }

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
id=$("$WARD" session new --cow)
"$WARD" run --session "$id" -- sh -c 'for f in d0/*; do echo changed >>"$f"; done'
upper=$XDG_STATE_HOME/ward/sessions/$id/upper
n=$("$WARD" diff "$id" --stat | wc -l)
echo "  pending changes: $n"

t0=$(now_us); cp -a "$upper/d0" "$T/cp-ref"; t1=$(now_us)
cp_us=$((t1 - t0))
t0=$(now_us); "$WARD" diff "$id" >/dev/null; t1=$(now_us)
diff_us=$((t1 - t0))
t0=$(now_us); "$WARD" apply "$id" >/dev/null; t1=$(now_us)
apply_us=$((t1 - t0))
cmp -s "$W/d0/f0" "$T/cp-ref/f0" || { echo "apply did not write the new content"; exit 1; }
t0=$(now_us); "$WARD" undo "$id" >/dev/null; t1=$(now_us)
undo_us=$((t1 - t0))
grep -qx "file 0" "$W/d0/f0" || { echo "undo did not restore"; exit 1; }

printf '  cp -a (reference): %8.1f ms\n' "$(echo "$cp_us / 1000" | bc -l)"
printf '  ward diff:         %8.1f ms  (%.1fx cp -a)\n' "$(echo "$diff_us / 1000" | bc -l)" "$(echo "$diff_us / $cp_us" | bc -l)"
printf '  ward apply:        %8.1f ms  (%.1fx cp -a)\n' "$(echo "$apply_us / 1000" | bc -l)" "$(echo "$apply_us / $cp_us" | bc -l)"
printf '  ward undo:         %8.1f ms  (%.1fx cp -a)\n' "$(echo "$undo_us / 1000" | bc -l)" "$(echo "$undo_us / $cp_us" | bc -l)"
echo "  (apply and undo fsync a backup, a journal line and the new file per entry; cp -a fsyncs nothing)"
