#!/usr/bin/env bash
# A real project this repository did not write, built and tested under
# ward: zlib's Debian source package (./configure, make, make test), once
# with `ward run` in the workspace and once in a copy-on-write session
# followed by `ward diff` and `ward apply`. The source is fetched with apt
# from the Debian mirror this machine already uses (a private apt state
# under the cache dir: the host's apt configuration is not touched), by the
# root run, into a cache the unprivileged run can read. No network, no
# mirror, not root on the first run: skipped with the reason.
# The diagnostics give the ward/bare time ratio (no timed assertion).
. "$(dirname "$0")/lib.sh"
require_t2
for t in make gcc; do
	command -v "$t" >/dev/null || { echo "1..0 # SKIP $t is needed to build zlib"; exit 0; }
done
cache=${WARD_TEST_CACHE:-/var/tmp/ward-test-cache}
src="$cache/zlib"

fetch_zlib() {
	local apt="$cache/apt" line uri rel
	command -v apt-get >/dev/null && command -v dpkg-source >/dev/null ||
		{ echo "apt-get and dpkg-source are needed"; return 1; }
	# The main release of the Debian mirror already configured.
	line=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
		awk '$1 ~ /\/debian\/$/ && $2 !~ /-/ { print; exit }')
	[ -n "$line" ] || { echo "no Debian mirror configured"; return 1; }
	read -r uri rel <<<"$line"
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$cache/get"
	echo "deb-src $uri $rel main" >"$apt/sources.list"
	local o=(-q -o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o APT::Sandbox::User=root)
	apt-get "${o[@]}" update >"$cache/apt.log" 2>&1 || { echo "apt-get update failed: $(tail -1 "$cache/apt.log")"; return 1; }
	(cd "$cache/get" && apt-get "${o[@]}" source zlib) >>"$cache/apt.log" 2>&1 ||
		{ echo "apt-get source zlib failed: $(tail -1 "$cache/apt.log")"; return 1; }
	local d
	d=$(find "$cache/get" -maxdepth 1 -type d -name 'zlib-*' | head -1)
	[ -n "$d" ] && [ -x "$d/configure" ] || { echo "no zlib source tree after apt-get source"; return 1; }
	rm -rf "$src"
	mv "$d" "$src"
	rm -rf "$cache/get"
	chmod -R a+rX "$cache"
}

if [ ! -x "$src/configure" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "1..0 # SKIP zlib's source is not in $cache (the root run fetches it)"
		exit 0
	fi
	mkdir -p "$cache" && chmod 755 "$cache"
	if ! why=$(fetch_zlib); then
		echo "1..0 # SKIP cannot fetch zlib's source: $why"
		exit 0
	fi
fi
diag "zlib source: $src ($(sed -n 's/^#define ZLIB_VERSION "\(.*\)"/\1/p' "$src/zlib.h"))"

now() { date +%s%N; }
build='./configure >/dev/null && make -j2 >/dev/null && make test'

# Bare, for the reference time.
cp -a "$src" "$T/bare"
t0=$(now)
(cd "$T/bare" && sh -c "$build") >"$T/bare.log" 2>&1
bare_st=$?
t_bare=$(( ($(now) - t0) / 1000000 ))
check_eq "control: zlib builds and passes its tests bare" 0 "$bare_st"

# ward run, in the workspace.
cp -a "$src" "$WS/zlib"
t0=$(now)
"$WARD" run -w "$WS/zlib" -- sh -c "$build" >"$T/ward.log" 2>&1
st=$?
t_ward=$(( ($(now) - t0) / 1000000 ))
check_eq "ward run: zlib's configure, make and make test succeed" 0 "$st"
check "ward run: zlib's own tests passed" grep -q '\*\*\* zlib test OK \*\*\*' "$T/ward.log"
check "ward run: the shared library's tests passed too" grep -q '\*\*\* zlib shared test OK \*\*\*' "$T/ward.log"
check "ward run: the build is in the host's workspace" test -f "$WS/zlib/libz.a"
check "ward run: the built minigzip works on the host" \
	bash -c "echo ward-zlib | '$WS/zlib/minigzip' | '$WS/zlib/minigzip' -d | grep -q ward-zlib"
[ "$st" -eq 0 ] || sed 's/^/# /' "$T/ward.log" | tail -20
diag "build + make test: bare ${t_bare} ms, ward run ${t_ward} ms, ratio $(awk "BEGIN { printf \"%.2f\", $t_ward / $t_bare }")"

# Copy-on-write: the host workspace stays as it was until apply.
mkdir -p "$T/cw"
cp -a "$src" "$T/cw/zlib"
before=$(cd "$T/cw/zlib" && find . -type f | sort | md5sum)
t0=$(now)
"$WARD" run --cow -w "$T/cw/zlib" -- sh -c "$build" >"$T/cow.log" 2>"$T/cow.err"
st=$?
t_cow=$(( ($(now) - t0) / 1000000 ))
sid=$(sed -n 's/^ward: session \([0-9a-f]*\)$/\1/p' "$T/cow.err")
check_eq "ward run --cow: zlib builds and passes its tests" 0 "$st"
check "ward run --cow: zlib's own tests passed" grep -q '\*\*\* zlib test OK \*\*\*' "$T/cow.log"
check_eq "ward run --cow: nothing changed in the host workspace" "$before" \
	"$(cd "$T/cw/zlib" && find . -type f | sort | md5sum)"
check_not "ward run --cow: no libz.a on the host before apply" test -e "$T/cw/zlib/libz.a"
diag "build + make test: ward run --cow ${t_cow} ms, ratio $(awk "BEGIN { printf \"%.2f\", $t_cow / $t_bare }")"
if [ -n "$sid" ]; then
	diff=$("$WARD" diff "$sid" --stat 2>&1)
	check "ward diff: the session lists the built library" grep -q 'libz\.a' <<<"$diff"
	check "ward diff: ... and the generated Makefile" grep -q 'Makefile' <<<"$diff"
	"$WARD" apply "$sid" >"$T/apply.log" 2>&1
	ast=$?
	check_eq "ward apply: succeeds" 0 "$ast"
	[ "$ast" -eq 0 ] || grep -v '^applied ' "$T/apply.log" | sed 's/^/# /' | head -20
	check "ward apply: libz.a is in the host workspace" test -f "$T/cw/zlib/libz.a"
	check "ward apply: the applied minigzip works on the host" \
		bash -c "echo ward-cow | '$T/cw/zlib/minigzip' | '$T/cw/zlib/minigzip' -d | grep -q ward-cow"
	check "ward apply: the applied tree passes zlib's tests on the host" \
		bash -c "cd '$T/cw/zlib' && make test 2>&1 | grep -q '\*\*\* zlib test OK \*\*\*'"
else
	not_ok "ward run --cow printed no session id: $(head -3 "$T/cow.err")"
fi

done_testing
