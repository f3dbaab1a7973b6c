#!/usr/bin/env bash
# libward as a harness uses it (issue 10 points 2 and 5): installed into a
# temporary prefix (meson install --destdir), found through pkg-config, a
# test program (tests/lib/test-libward.c) and the C example
# (examples/c/harness.c) built against the installed header and library
# and run. Also: only the ward_* functions of the header are exported, the
# soname, the installed files.
# ward-test: stage
# (run-unpriv.sh calls `test-libward.sh --stage DIR` as root first: the
# unprivileged user cannot reach the build tree.)

SRC_ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$(dirname "$0")/managed-lib.sh"
# Stage the installed tree and the sources to build into DIR.
stage() {
	local dir=$1 src=$SRC_ROOT
	: "${WARD_BUILD_ROOT:?WARD_BUILD_ROOT must point at the meson build dir}"
	mkdir -p "$dir/dest" "$dir/src"
	meson install -C "$WARD_BUILD_ROOT" --no-rebuild --quiet --destdir "$dir/dest" >/dev/null
	cp -r "$src/examples" "$src/tests/lib" "$dir/src/"
	cp "$src/src/lib/libward.sym" "$dir/src/"
	chmod -R a+rX "$dir"
}
if [ "${1:-}" = --stage ]; then
	stage "$2"
	managed_stage
	exit 0
fi

. "$(dirname "$0")/lib.sh"
require_t2

S=${WARD_STAGE_DIR:-}
if [ -z "$S" ] || [ ! -d "$S/dest" ]; then
	S="$T/stage"
	stage "$S" || skip_all "cannot install the build into a temporary prefix"
fi
D="$S/dest"
pc=$(find "$D" -name ward.pc | head -n 1)
lib=$(find "$D" -name 'libward.so.*.*' | head -n 1)
libdir=$(dirname "$lib")
check "ward.pc is installed" test -f "$pc"
check "the header is installed as ward/ward.h" test -f "$(find "$D" -path '*/include/ward/ward.h' | head -n 1)"
check "the man page is installed" test -f "$(find "$D" -name ward.1 | head -n 1)"
check "the ward binary is installed" test -x "$(find "$D" -path '*/bin/ward' | head -n 1)"
check_eq "the soname is libward.so.0" "libward.so.0" \
	"$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
check "libward.so -> libward.so.0 for the linker" test -L "$libdir/libward.so"

# pkg-config finds it with the prefix moved under DESTDIR.
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR="$D"
check_eq "pkg-config --modversion is ward's version" \
	"$("$WARD" --version | awk '{print $2}')" "$(pkg-config --modversion ward)"

# Exported: the functions the header declares, nothing else (the version
# node LIBWARD_0 itself shows as an absolute symbol).
header=$(find "$D" -path '*/include/ward/ward.h' | head -n 1)
grep -o '^WARD_PUBLIC [^(]*(' "$header" | sed 's/.*[ *]\(ward_[a-z_]*\)(/\1/' | sort >"$T/declared"
nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort >"$T/exported"
grep -o '^	ward_[a-z_]*;' "$S/src/libward.sym" | tr -d '\t;' | sort >"$T/listed"
check "exports are exactly the header's WARD_PUBLIC functions" diff "$T/declared" "$T/exported"
check "the version script lists exactly those" diff "$T/declared" "$T/listed"
check "at least 40 functions are declared" test "$(wc -l <"$T/declared")" -ge 40
check_not "no internal symbol is exported" grep -qv '^ward_' "$T/exported"

# The sanitizer build's library needs its runtime first in the program.
san=()
if ldd "$lib" | grep -q libasan; then
	san=("-fsanitize=address,undefined")
fi
export LD_LIBRARY_PATH="$libdir"
printf '#include <ward/ward.h>\nint main(void) { return ward_version() == 0; }\n' >"$T/alone.c"
# shellcheck disable=SC2046 # pkg-config's output is words
check "the header compiles alone with -std=c99 -pedantic" \
	cc -std=c99 -pedantic -Wall -Wextra -Werror $(pkg-config --cflags ward) -fsyntax-only "$T/alone.c"
# shellcheck disable=SC2046
check "the test program builds against the installed library" \
	cc "${san[@]}" -Wall -Wextra -Werror -o "$T/test-libward" "$S/src/lib/test-libward.c" \
	$(pkg-config --cflags --libs ward) -lpthread
cp -r "$S/src/examples/c" "$T/example"
check "the example builds with its Makefile through pkg-config" \
	make -s -B -C "$T/example" CFLAGS="${san[*]} -O2 -Wall -Wextra -Werror" harness

# The test program's TAP, renumbered into this script's.
echo secret-content-4711 >"$HOME/secret.txt"
if [ -x "$T/test-libward" ]; then
	"$T/test-libward" "$WS" "$HOME/secret.txt" >"$T/tap" 2>"$T/tap.err"
	rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP "*) ok_skip "libward: ${line#*# SKIP }" ;;
		"ok "*) ok "libward: ${line#ok [0-9]* - }" ;;
		"not ok "*"# TODO "*)
			# A known-open check: stays "not ok ... # TODO", not a failure.
			_tap_n=$((_tap_n + 1))
			echo "not ok $_tap_n - libward: ${line#not ok [0-9]* - }"
			;;
		"not ok "*) not_ok "libward: ${line#not ok [0-9]* - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$T/tap"
	check_eq "the test program ran to its end" 0 "$rc"
	sed 's/^/# stderr: /' "$T/tap.err"
fi

# The example: a copy-on-write run, its result and its diff; the host
# file stays as it was (the example discards the session).
echo before >"$WS/ex.txt"
h="$T/example/harness"
if [ -x "$h" ]; then
	"$h" --cow -- sh -c 'echo after > ex.txt; echo made > ex-new.txt; exit 4' >"$T/ex.out" 2>"$T/ex.err"
	check_eq "the example exits with the command's status" 4 "$?"
	check "the example prints the result" grep -q '^exit code: *4$' "$T/ex.out"
	check "the example prints the result JSON" grep -q '^result: *{' "$T/ex.out"
	check "the example prints the diff" grep -q '^+after$' "$T/ex.out"
	check "the example names the new file" grep -q 'ex-new.txt' "$T/ex.out"
	check_eq "the host file is unchanged" before "$(cat "$WS/ex.txt")"
	check_not "the new file is not on the host" test -e "$WS/ex-new.txt"
	check "the example discarded the session" grep -q '^--- discarded: yes' "$T/ex.out"
	sed 's/^/# /' "$T/ex.err"
fi
# The managed ceiling bounds libward callers too (managed-lib.sh): a
# widening is refused before anything runs, a narrowing works.
if [ -x "$h" ] && managed_dir; then
	lw() { WARD_TEST_MANAGED_FILE="$MANAGED/$1" "$h" "${@:2}"; }
	lw main.json --allow evil.org -- touch "$WS/lw-widen" >"$T/lw.out" 2>"$T/lw.err"
	check_eq "libward: a host outside the ceiling: 125" 125 "$?"
	check "libward: the refusal names the managed rule and the caller" \
		grep -q 'managed.*libward caller.*network.allow' "$T/lw.err"
	check_not "libward: and the command did not run" test -e "$WS/lw-widen"
	lw main.json --allow api.example.com -- touch "$WS/lw-narrow" >/dev/null 2>&1
	check_eq "libward: a host within the ceiling runs" 0 "$?"
	check "libward: and the command ran" test -e "$WS/lw-narrow"
	lw cow.json -- touch "$WS/lw-cow" >/dev/null 2>&1
	check_eq "libward: require_cow refuses a plain run" 125 "$?"
	check_not "libward: and the command did not run" test -e "$WS/lw-cow"
	lw cow.json --cow -- touch "$WS/lw-cow2" >/dev/null 2>&1
	check_eq "libward: require_cow, a cow run works" 0 "$?"
	check_not "libward: its write stayed in the session" test -e "$WS/lw-cow2"
else
	ok_skip "libward and the managed ceiling: no harness or no test ceilings"
fi

done_testing
