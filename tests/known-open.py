#!/usr/bin/env python3
"""List the known-open checks of the last `meson test` run: every TAP line
marked "# TODO" (an expected failure, or an unexpected pass to promote),
from meson's testlog.json. Usage: known-open.py BUILD_DIR/meson-logs/testlog.json"""
import json
import re
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "build-asan/meson-logs/testlog.json"
try:
    lines = open(path).read().splitlines()
except OSError as e:
    print(f"known-open: cannot read {path}: {e}")
    sys.exit(0)
found = []
for line in lines:
    r = json.loads(line)
    for out in (r.get("stdout") or "").splitlines():
        m = re.match(r"^(not ok|ok) \d+ - (.*?) # TODO (.*)$", out)
        if m:
            state = "still open" if m.group(1) == "not ok" else "PASSES now"
            found.append(f"  {r.get('name')}: {m.group(2)} [{state}: {m.group(3)}]")
if found:
    print(f"Known-open checks ({len(found)}, TAP # TODO):")
    print("\n".join(found))
else:
    print("Known-open checks: none")
