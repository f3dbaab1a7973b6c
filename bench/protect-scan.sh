#!/usr/bin/env bash
# What the protected-path walk costs (docs/sandbox.md, "Protected paths"):
# ward walks the workspace before a run (to bind what exists read-only) and
# after it (the quarantine check). Measured in one run, interleaved:
#   - `ward run -- /bin/true` in an empty workspace (the reference);
#   - the same in a generated tree of 50,000 files in 2,500 directories
#     (with 20 nested repositories and some editor configurations);
#   - the same in a copy of /usr/share (the real shapes of a large tree),
#     skipped when it cannot be copied.
# It prints the medians, the ratios to the empty workspace and the walk's
# own time as the start audit event reports it (protected.scan_us).
#   bench/protect-scan.sh [WARD] [REPETITIONS]
set -euo pipefail
WARD=${1:-build/ward}
N=${2:-30}
WARD=$(realpath "$WARD")

T=$(mktemp -d /tmp/ward-bench-protect.XXXXXX)
trap 'rm -rf "$T"' EXIT
export HOME=$T/home XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config
mkdir -p "$HOME" "$T/empty" "$T/gen"

# 2,500 directories of 20 files, 5 levels deep.
python3 - "$T/gen" <<'PY'
import os, sys
root = sys.argv[1]
n = 0
for a in range(10):
    for b in range(10):
        for c in range(25):
            d = os.path.join(root, f"a{a}", f"b{b}", f"c{c}")
            os.makedirs(d, exist_ok=True)
            for f in range(20):
                with open(os.path.join(d, f"f{f}.txt"), "w") as fh:
                    fh.write("x\n")
                n += 1
        # a nested repository and an editor configuration every few dirs
        if b % 5 == 0:
            os.makedirs(os.path.join(root, f"a{a}", f"b{b}", ".git", "objects"), exist_ok=True)
            with open(os.path.join(root, f"a{a}", f"b{b}", ".git", "config"), "w") as fh:
                fh.write("[core]\n")
        if b == 3:
            os.makedirs(os.path.join(root, f"a{a}", f"b{b}", ".vscode"), exist_ok=True)
print(f"# generated tree: {n} files", file=sys.stderr)
PY
usr=""
if cp -a /usr/share "$T/usr-share" 2>/dev/null; then
	usr="$T/usr-share"
	echo "# /usr/share copy: $(find "$usr" | wc -l) entries" >&2
fi

python3 - "$N" "$WARD" "$T" "$usr" <<'PY'
import json, os, statistics, subprocess, sys, time
n, ward, t, usr = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
spaces = {"empty": f"{t}/empty", "generated-50k": f"{t}/gen"}
if usr:
    spaces["usr-share-copy"] = usr
times = {k: [] for k in spaces}
audit = f"{t}/state/ward/audit.jsonl"

def scan_us(ws):
    last = None
    for line in open(audit):
        e = json.loads(line)
        if e.get("event") == "start" and e.get("workspace") == ws:
            last = e.get("protected", {})
    return last

for k, ws in spaces.items():  # warm the caches once
    subprocess.run([ward, "run", "--", "/bin/true"], cwd=ws, check=True)
for _ in range(n):
    for k, ws in spaces.items():
        t0 = time.perf_counter()
        subprocess.run([ward, "run", "--", "/bin/true"], cwd=ws, check=True,
                       stderr=subprocess.DEVNULL)
        times[k].append((time.perf_counter() - t0) * 1000)
ref = statistics.median(times["empty"])
print(f"{'workspace':<16} {'median ms':>10} {'ratio':>7} {'walk ms':>8} {'dirs':>7} {'protected':>9}")
for k, ws in spaces.items():
    m = statistics.median(times[k])
    p = scan_us(ws) or {}
    print(f"{k:<16} {m:>10.1f} {m / ref:>7.2f} {p.get('scan_us', 0) / 1000:>8.1f} "
          f"{p.get('dirs_scanned', 0):>7} {p.get('existing', 0):>9}")
print(f"# {n} runs each, interleaved; walk ms is the walk before the run (the one after "
      "costs about the same and is inside the median)")
PY
